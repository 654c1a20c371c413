"""Builds the grouping object for one subscription of the logical plan."""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence

from engine.common.grouping.all import AllGrouping
from engine.common.grouping.base import Grouping, GroupingError
from engine.common.grouping.custom import CustomGrouping
from engine.common.grouping.direct import DirectGrouping
from engine.common.grouping.fields import FieldsGrouping
from engine.common.grouping.local_or_shuffle import LocalOrShuffleGrouping
from engine.common.grouping.lowest import LowestGrouping
from engine.common.grouping.shuffle import ShuffleGrouping


def build_grouping(kind: str, tasks: Sequence[int], *, stream_fields: Sequence[str] = (),
                   grouping_fields: Sequence[str] = (), local_tasks: Collection[int] | None = None,
                   consumer: str = "", rng: random.Random | None = None,
                   key_groups: int | None = None, custom_grouping: str | None = None,
                   stream: str = "default") -> Grouping:
    """A grouping of ``kind`` ('shuffle', 'fields', 'all', 'global', 'none', 'direct',
    'local_or_shuffle', 'custom') over the consumer's ``tasks``.

    Fields grouping with no fields is Storm's encoding of global grouping; with
    ``key_groups`` (EFFECTIVELY_ONCE) a fields grouping routes by key group.
    """
    if kind == "fields" and not grouping_fields:
        kind = "global"
    if kind in ("shuffle", "none"):
        return ShuffleGrouping(tasks, rng)
    if kind == "fields":
        missing = [f for f in grouping_fields if f not in stream_fields]
        if missing:
            raise GroupingError(
                f"component {consumer!r} groups on unknown field(s) {missing}; "
                f"the stream declares {list(stream_fields)}")
        return FieldsGrouping(tasks, [list(stream_fields).index(f) for f in grouping_fields],
                              key_groups)
    if kind == "all":
        return AllGrouping(tasks)
    if kind in ("global", "lowest"):
        return LowestGrouping(tasks)
    if kind == "direct":
        return DirectGrouping(tasks, consumer)
    if kind == "custom":
        if not custom_grouping:
            raise GroupingError(f"component {consumer!r}: a custom grouping needs its class "
                                "or pickled object")
        return CustomGrouping(tasks, custom_grouping, consumer, stream)
    if kind == "local_or_shuffle":
        return LocalOrShuffleGrouping(tasks, local_tasks, rng)
    raise GroupingError(f"component {consumer!r}: grouping {kind!r} is not supported")
