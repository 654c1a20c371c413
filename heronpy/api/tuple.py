"""heronpy's ``Tuple`` and the tick tuple's names.

Bolts receive ``compat.storm_api.Tuple`` objects, which have these five fields in this
order (``id component stream task values``); heronpy's name is kept for code that builds
its own tuples (tests, mocks).
"""

from __future__ import annotations

from collections import namedtuple

Tuple = namedtuple("Tuple", "id component stream task values")


class TupleHelper:
    """The stream and component of tick tuples."""

    TICK_TUPLE_ID = "__tick"
    TICK_SOURCE_COMPONENT = "__system"
