"""Errors raised while a topology is being defined.

streamparse raises bare ``ValueError``, ``TypeError`` and ``KeyError`` for mistakes in
a topology file, and user code (and tests) catch those. Each error here is also one of
those built-ins, so ``except ValueError`` keeps working, and all of them share
``TopologyDefinitionError`` so a CLI can catch one type and print one clean line.
"""

from __future__ import annotations

__all__ = [
    "InvalidTopologyKey",
    "InvalidTopologyType",
    "InvalidTopologyValue",
    "TopologyDefinitionError",
]


class TopologyDefinitionError(Exception):
    """A topology, spec, stream or grouping is declared wrongly; the message says how."""


class InvalidTopologyValue(TopologyDefinitionError, ValueError):
    """The right kind of value with a wrong content (par=0, a field no stream has)."""


class InvalidTopologyType(TopologyDefinitionError, TypeError):
    """The wrong kind of value (a str where a dict is expected, a forgotten ``.spec()``)."""


class InvalidTopologyKey(TopologyDefinitionError, KeyError):
    """A reference to a component or stream that is not declared."""

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument, which would quote the message.
        return str(self.args[0]) if self.args else ""
