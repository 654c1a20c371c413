"""The error hierarchy: built-in types for compatibility, one base for the CLI."""

from __future__ import annotations

import pytest

from compat.storm_api.dsl import errors


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (errors.InvalidTopologyValue, ValueError),
        (errors.InvalidTopologyType, TypeError),
        (errors.InvalidTopologyKey, KeyError),
    ],
)
def test_each_error_is_the_builtin_streamparse_raises_and_a_definition_error(error, builtin):
    with pytest.raises(builtin):
        raise error("message")
    with pytest.raises(errors.TopologyDefinitionError):
        raise error("message")


def test_key_error_prints_its_message_without_quotes():
    assert str(errors.InvalidTopologyKey("no stream 'x'")) == "no stream 'x'"
