"""Container sizing read once, with Heron's defaults, and refused in one line naming the
key at submit (a bad padding used to surface as a traceback from the packing)."""

from __future__ import annotations

import pytest

from engine.common.plan.config_check import check_runtime_config
from engine.common.plan.errors import InvalidConfigError
from engine.config.containers import (
    GIB,
    MaxContainerHints,
    Padding,
    max_container_hints,
    padding,
    padding_percentage,
)
from engine.config.errors import ConfigError


def test_defaults_are_herons():
    assert padding({}) == Padding(ram=2 * GIB, cpu=1.0, disk=12 * GIB)
    assert padding_percentage({}) == 10.0
    assert max_container_hints({}) == MaxContainerHints(None, None, None)


def test_set_values_are_kept_fractional_cores_and_zero_padding_included():
    conf = {"topology.container.padding.ram": 0, "topology.container.padding.cpu": 0.5,
            "topology.container.padding.disk": 1024.0,
            "topology.container.padding.percentage": 0,
            "topology.container.max.ram.hint": 3 * GIB,
            "topology.container.max.cpu.hint": 2.5}
    assert padding(conf) == Padding(ram=0, cpu=0.5, disk=1024)
    assert padding_percentage(conf) == 0.0
    assert max_container_hints(conf) == MaxContainerHints(ram=3 * GIB, cpu=2.5, disk=None)


@pytest.mark.parametrize("key, value, message", [
    ("topology.container.padding.ram", "abc", "must be a whole number of bytes"),
    ("topology.container.padding.ram", -1, "must be a whole number of bytes"),
    ("topology.container.padding.ram", 1.5, "must be a whole number of bytes"),
    ("topology.container.padding.cpu", "lots", "must be a number of cores >= 0"),
    ("topology.container.padding.disk", True, "must be a whole number of bytes"),
    ("topology.container.padding.percentage", 100, r"must be a number in \[0, 100\)"),
    ("topology.container.max.ram.hint", 0, "must be a whole number of bytes of at least 1"),
    ("topology.container.max.cpu.hint", 0, "must be a number of cores > 0"),
])
def test_a_bad_value_is_one_line_naming_key_and_value(key, value, message):
    with pytest.raises(ConfigError, match=rf"^{key.replace('.', '[.]')} {message}.*"
                                          rf"got {value!r}$"):
        for read in (padding, padding_percentage, max_container_hints):
            read({key: value})


def test_submit_refuses_a_bad_padding_before_packing():
    with pytest.raises(InvalidConfigError,
                       match=r"^invalid config: topology.container.padding.ram must be a "
                             r"whole number of bytes .* got 'abc'$"):
        check_runtime_config({"topology.container.padding.ram": "abc"})
