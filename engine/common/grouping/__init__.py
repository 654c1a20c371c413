"""Stream groupings: which task(s) of a consuming component get each tuple.

One small module per grouping behind one interface (:class:`Grouping`), shared by the
``storm`` engine, the Stream Manager and the Heron Instance (which computes targets
itself when an emit must return task ids), so every place routes the same way.
"""

from engine.common.grouping.base import Grouping, GroupingError
from engine.common.grouping.factory import build_grouping
from engine.common.grouping.hashing import fields_key_hash

__all__ = ["Grouping", "GroupingError", "build_grouping", "fields_key_hash"]
