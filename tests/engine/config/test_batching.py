"""When an instance sends its open batch is read in engine/config: Heron-sized defaults,
good values typed, a bad value refused as a ConfigError in one line naming the key."""

import pytest

from engine.config.batching import Batching, InflightConfigError, batching
from engine.config.errors import ConfigError
from engine.config.keys import BATCH_BYTES_KEY, BATCH_ROWS_KEY, BATCH_TIME_KEY, with_defaults


def test_defaults_and_good_values():
    assert batching(with_defaults({})) == batching({}) == Batching(1024, 32 * 1024, 0.005)
    assert batching({BATCH_ROWS_KEY: 10, BATCH_BYTES_KEY: 100, BATCH_TIME_KEY: 1}) \
        == Batching(10, 100, 0.001)


@pytest.mark.parametrize(("key", "value"), [(BATCH_ROWS_KEY, 2.5), (BATCH_BYTES_KEY, 0),
                                            (BATCH_TIME_KEY, "soon"), (BATCH_TIME_KEY, False)])
def test_a_bad_value_names_its_key_and_value(key, value):
    with pytest.raises(InflightConfigError) as caught:
        batching({key: value})
    assert isinstance(caught.value, ConfigError)
    message = str(caught.value)
    assert key in message and repr(value) in message and "\n" not in message
