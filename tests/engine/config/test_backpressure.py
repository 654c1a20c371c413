"""The Stream Manager's backpressure watermarks are read in engine/config: Heron's byte
defaults (8 MB / 4 MB) and a 40 ms time watermark, good values typed, a bad value or a
low watermark not below the high one refused in one line naming the key."""

import pytest

from engine.config.backpressure import (
    BackpressureConfigError,
    blame_wait_watermarks,
    wait_watermarks,
    watermarks,
)
from engine.config.errors import ConfigError
from engine.config.keys import with_defaults

MB = 1024 * 1024
HIGH = "heron.streammgr.network.backpressure.highwatermark.mb"
LOW = "heron.streammgr.network.backpressure.lowwatermark.mb"
HIGH_MS = "heron.streammgr.network.backpressure.highwatermark.ms"


def test_defaults():
    for conf in ({}, with_defaults({})):
        assert watermarks(conf) == (8 * MB, 4 * MB)
        assert wait_watermarks(conf) == pytest.approx((0.040, 0.008))
        assert blame_wait_watermarks(conf) == (float("inf"), float("inf"))


def test_good_values():
    assert watermarks({HIGH: 2, LOW: 0.5}) == (2 * MB, MB // 2)
    assert wait_watermarks({HIGH_MS: 100}) == pytest.approx((0.1, 0.02))


@pytest.mark.parametrize(("conf", "key"), [
    ({HIGH: 0}, HIGH),
    ({LOW: "lots"}, LOW),
    ({HIGH: 4, LOW: 4}, LOW),
    ({HIGH_MS: -1}, HIGH_MS),
])
def test_a_bad_value_names_its_key(conf, key):
    with pytest.raises(BackpressureConfigError) as caught:
        watermarks(conf)
        wait_watermarks(conf)
    assert isinstance(caught.value, ConfigError)
    assert key in str(caught.value) and "\n" not in str(caught.value)
