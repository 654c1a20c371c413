"""Routing tables: for each (component, stream), who consumes it and how."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Mapping

from engine.grouping import Grouping, build_grouping


@dataclass
class StreamRoute:
    """Where tuples emitted by one component on one stream go."""

    component: str
    stream: str
    fields: tuple[str, ...]
    direct: bool
    groupings: list[Grouping] = field(default_factory=list)
    capture: Any = None  # StreamCapture for leaf streams

    @property
    def leaf(self) -> bool:
        return not self.groupings


def build_routes(plan: Any, tasks_by_component: Mapping[str, list[int]],
                 rng: random.Random, key_groups: int | None = None,
                 ) -> dict[str, dict[str, StreamRoute]]:
    """``routes[component][stream]`` for every declared output stream of the plan; with
    ``key_groups`` (EFFECTIVELY_ONCE), fields groupings route by key group.

    Each emitting *task* gets its own grouping objects (built per call), so shuffle
    round-robin state is per task, as in Storm.
    """
    routes: dict[str, dict[str, StreamRoute]] = {}
    for comp in plan.components.values():
        per_stream: dict[str, StreamRoute] = {}
        for stream in comp.outputs.values():
            route = StreamRoute(comp.name, stream.name, tuple(stream.fields), stream.direct)
            for consumer, inp in plan.consumers(comp.name, stream.name):
                route.groupings.append(build_grouping(
                    inp.grouping, tasks_by_component[consumer.name],
                    stream_fields=stream.fields, grouping_fields=inp.fields,
                    consumer=consumer.name, rng=rng, key_groups=key_groups))
            per_stream[stream.name] = route
        routes[comp.name] = per_stream
    return routes
