"""The routes a Stream Manager splits batches by, built from the plan once per plan.

Groupings follow DESIGN "Wire": shuffle is round-robin from a random start per
(producer task, consumer); fields picks ``sorted_tasks[hash % n]`` from the hash the
emitting instance computed; all copies to every task; global (lowest) sends everything
to the lowest task id; none is shuffle; local-or-shuffle prefers the consumer's tasks in
this container; direct and ``need_task_ids`` emits, and every emit on a stream a
custom grouping subscribes to, carry explicit destinations.

The per-tuple work, splitting a columnar batch per destination task by these routes
without touching its values, is ``routing.py`` (pure Python) and its compiled twin
``_routing.pyx``, whichever the switch selected (``engine.common.codec.selected_module``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from engine.common.grouping.key_groups import routing_table
from engine.stmgr.routing import ALL, DIRECT, FIELDS, LOWEST, SHUFFLE


@dataclass
class ConsumerRoute:
    """How one consuming component's tasks get tuples of one (component, stream)."""

    consumer: str
    kind: str
    tasks: tuple[int, ...]
    key_column: int = 0  # which of the batch's hash columns (fields grouping)
    #: round-robin position per producing task (shuffle)
    next_by_src: dict[int, int] = field(default_factory=dict)
    rng: random.Random = field(default_factory=random.Random)
    #: fields grouping under EFFECTIVELY_ONCE: the owning task of every key group
    #: (engine.common.grouping.key_groups.routing_table), so keyed state and its keys agree
    key_groups: tuple[int, ...] | None = None

    def start_for(self, src: int) -> int:
        pos = self.next_by_src.get(src)
        if pos is None:
            pos = self.rng.randrange(len(self.tasks))
        return pos


def build_routes(plan: Any, tasks_by_component: dict[str, list[int]],
                 local_tasks: set[int], key_groups: int | None = None,
                 ) -> dict[tuple[str, str], list[ConsumerRoute]]:
    """``routes[(producer, stream)]``: one ConsumerRoute per subscription; with
    ``key_groups`` (EFFECTIVELY_ONCE), fields groupings route by key group."""
    routes: dict[tuple[str, str], list[ConsumerRoute]] = {}
    for comp in plan.components.values():
        for stream in comp.outputs.values():
            key_sets = list(plan.key_field_sets(comp.name, stream.name))
            entries = []
            for consumer, inp in plan.consumers(comp.name, stream.name):
                tasks = tuple(sorted(tasks_by_component[consumer.name]))
                kind = inp.grouping
                column = 0
                if kind == "fields" and not inp.fields:
                    kind = "global"
                if kind == "fields":
                    column = key_sets.index(tuple(inp.fields))
                    table = routing_table(tasks, key_groups) if key_groups else None
                    entries.append(ConsumerRoute(consumer.name, FIELDS, tasks, column,
                                                 key_groups=table))
                elif kind in ("shuffle", "none"):
                    entries.append(ConsumerRoute(consumer.name, SHUFFLE, tasks))
                elif kind == "local_or_shuffle":
                    local = tuple(t for t in tasks if t in local_tasks)
                    entries.append(ConsumerRoute(consumer.name, SHUFFLE, local or tasks))
                elif kind == "all":
                    entries.append(ConsumerRoute(consumer.name, ALL, tasks))
                elif kind in ("global", "lowest"):
                    entries.append(ConsumerRoute(consumer.name, LOWEST, tasks))
                elif kind in ("direct", "custom"):
                    # the emitter chose (a direct emit's task, a custom grouping's tasks):
                    # nothing reaches these tasks without the batch's destinations
                    entries.append(ConsumerRoute(consumer.name, DIRECT, tasks))
                else:
                    raise ValueError(f"component {consumer.name!r}: grouping {kind!r} cannot be "
                                     "routed by the stream manager")
            routes[(comp.name, stream.name)] = entries
    return routes


__all__ = ["ConsumerRoute", "build_routes"]
