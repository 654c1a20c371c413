"""The key-group count every role reads the same way, refused as any config value is."""

from __future__ import annotations

import pytest

from engine.config.errors import ConfigError
from engine.config.key_groups import DEFAULT_KEY_GROUPS, key_groups


def test_unset_is_flinks_default_and_a_whole_number_is_kept():
    assert key_groups({}) == DEFAULT_KEY_GROUPS == 128
    assert key_groups({"topology.stateful.key.groups": 7}) == 7


@pytest.mark.parametrize("bad", [0, 65537, 2.0, "8", True, None])
def test_a_bad_count_is_a_config_error_naming_the_key_and_value(bad):
    with pytest.raises(ConfigError, match=rf"^topology\.stateful\.key\.groups must be a whole "
                                          rf"number from 1 to 65536, got {bad!r}$"):
        key_groups({"topology.stateful.key.groups": bad})
