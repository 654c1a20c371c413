"""The byte capacities between a Stream Manager and its instances are read in
engine/config: defaults, good values typed, a bad value refused as a ConfigError in one
line naming the key and the value."""

import pytest

from engine.config.credits import CreditConfigError, capacities
from engine.config.errors import ConfigError
from engine.config.keys import BOLT_READ_KEY, BOLT_WRITE_KEY, SPOUT_WRITE_KEY, with_defaults


def test_defaults_and_good_values():
    assert capacities(with_defaults({})) == capacities({})
    caps = capacities({BOLT_READ_KEY: 10, SPOUT_WRITE_KEY: 20, BOLT_WRITE_KEY: 30})
    assert (caps.bolt_read, caps.write("spout"), caps.write("bolt")) == (10, 20, 30)


@pytest.mark.parametrize("value", [0, -5, 1.5, "64k", True])
def test_a_bad_value_names_its_key_and_value(value):
    with pytest.raises(CreditConfigError) as caught:
        capacities({BOLT_WRITE_KEY: value})
    assert isinstance(caught.value, ConfigError)
    message = str(caught.value)
    assert BOLT_WRITE_KEY in message and repr(value) in message and "\n" not in message
