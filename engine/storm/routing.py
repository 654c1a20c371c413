"""Routing tables: for each (component, stream), who consumes it and how."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.common.grouping import Grouping, build_grouping
from engine.common.grouping.custom import CustomGrouping


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
                    consumer=consumer.name, rng=rng, key_groups=key_groups,
                    custom_grouping=inp.custom_grouping, stream=stream.name))
            per_stream[stream.name] = route
        routes[comp.name] = per_stream
    return routes


def task_routes(routes: dict[str, StreamRoute], context: dict | None) -> dict[str, StreamRoute]:
    """One emitting task's routes: a component's, with a fresh custom grouping per task
    (each task unpickles or builds its own and prepares it with its own context, as
    Storm's and Heron's do); streams without one are shared."""
    out = dict(routes)
    for name, route in routes.items():
        if any(isinstance(g, CustomGrouping) for g in route.groupings):
            groupings = [CustomGrouping(g.tasks, g.spec, g.consumer, g.stream)
                         if isinstance(g, CustomGrouping) else g for g in route.groupings]
            for g in groupings:
                if isinstance(g, CustomGrouping):
                    g.bind(context)
            out[name] = dataclasses.replace(route, groupings=groupings)
    return out
