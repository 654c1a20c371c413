"""Split a columnar batch per destination task, touching no values.

Groupings follow DESIGN "Wire": shuffle is round-robin from a random start per
(producer task, consumer); fields picks ``sorted_tasks[hash % n]`` from the hash the
emitting instance computed; all copies to every task; global (lowest) sends everything
to the lowest task id; none is shuffle; local-or-shuffle prefers the consumer's tasks in
this container; direct and ``need_task_ids`` emits carry explicit destinations.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Iterable

from engine.messages import tuple_pb2

SHUFFLE, FIELDS, ALL, LOWEST, DIRECT = "shuffle", "fields", "all", "lowest", "direct"


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

    def start_for(self, src: int) -> int:
        pos = self.next_by_src.get(src)
        if pos is None:
            pos = self.rng.randrange(len(self.tasks))
        return pos


def build_routes(plan: Any, tasks_by_component: dict[str, list[int]],
                 local_tasks: set[int]) -> dict[tuple[str, str], list[ConsumerRoute]]:
    """``routes[(producer, stream)]``: one ConsumerRoute per subscription."""
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
                    entries.append(ConsumerRoute(consumer.name, FIELDS, tasks, column))
                elif kind in ("shuffle", "none"):
                    entries.append(ConsumerRoute(consumer.name, SHUFFLE, tasks))
                elif kind == "local_or_shuffle":
                    local = tuple(t for t in tasks if t in local_tasks)
                    entries.append(ConsumerRoute(consumer.name, SHUFFLE, local or tasks))
                elif kind == "all":
                    entries.append(ConsumerRoute(consumer.name, ALL, tasks))
                elif kind in ("global", "lowest"):
                    entries.append(ConsumerRoute(consumer.name, LOWEST, tasks))
                elif kind == "direct":
                    entries.append(ConsumerRoute(consumer.name, DIRECT, tasks))
                else:
                    raise ValueError(f"component {consumer.name!r}: grouping {kind!r} cannot be "
                                     "routed by the stream manager")
            routes[(comp.name, stream.name)] = entries
    return routes


def split_batch(batch: Any, payload: bytes, routes: Iterable[ConsumerRoute]
                ) -> list[tuple[int, bytes | list[bytes]]]:
    """``[(task, payload_or_values)]``: the original payload when a task gets the whole
    batch (nothing to re-encode), else the list of value blobs it gets."""
    out: list[tuple[int, bytes | list[bytes]]] = []
    values = batch.values
    n = len(values)
    if not n:
        return out
    if len(batch.dest_counts):
        return _split_explicit(batch, routes)
    src = batch.src_task_id
    for route in routes:
        kind = route.kind
        tasks = route.tasks
        nt = len(tasks)
        if kind == ALL:
            out.extend((t, payload) for t in tasks)
        elif kind == LOWEST or nt == 1:
            if kind != DIRECT:
                out.append((tasks[0], payload))
        elif kind == SHUFFLE:
            start = route.start_for(src)
            vals = list(values)
            for k in range(min(nt, n)):
                out.append((tasks[(start + k) % nt], vals[k::nt]))
            route.next_by_src[src] = (start + n) % nt
        elif kind == FIELDS:
            width = batch.key_hash_width or 1
            hashes = batch.key_hashes
            column = hashes if width == 1 else hashes[route.key_column::width]
            buckets: list[list[bytes]] = [[] for _ in range(nt)]
            for v, h in zip(values, column):
                buckets[h % nt].append(v)
            out.extend((tasks[i], b) for i, b in enumerate(buckets) if b)
        # DIRECT without explicit destinations: nothing (the emitter names the task)
    return out


def _split_explicit(batch: Any, routes: Iterable[ConsumerRoute]) -> list[tuple[int, list[bytes]]]:
    """Per-tuple path for batches where some tuples name their destinations."""
    values = batch.values
    return [(task, [values[i] for i in rows]) for task, rows in split_indices(batch, routes)]


def rebatch(batch: Any, values: list[bytes]) -> bytes:
    """A batch of the same stream and source holding ``values`` (no hash columns: the
    receiver is an instance, which needs only the values)."""
    out = tuple_pb2.TupleBatch(src_task_id=batch.src_task_id, values=values)
    out.stream.CopyFrom(batch.stream)
    return out.SerializeToString()


def split_indices(batch: Any, routes: Iterable[ConsumerRoute]) -> list[tuple[int, list[int]]]:
    """``[(task, row indices)]``: the tracked (at-least-once) path, where every copy needs
    its own key and its tuple's roots, so destinations are worked out per row."""
    routes = list(routes)
    n = len(batch.values)
    if not n:
        return []
    per_task: dict[int, list[int]] = {}
    counts = batch.dest_counts
    explicit = len(counts) > 0
    dests = batch.dest_tasks
    width = batch.key_hash_width or 1
    hashes = batch.key_hashes
    src = batch.src_task_id
    if not explicit:
        # whole-batch decisions, as split_batch makes them, on row indices
        for route in routes:
            tasks = route.tasks
            nt = len(tasks)
            kind = route.kind
            if kind == ALL:
                for t in tasks:
                    per_task.setdefault(t, []).extend(range(n))
            elif kind == LOWEST or (nt == 1 and kind != DIRECT):
                per_task.setdefault(tasks[0], []).extend(range(n))
            elif kind == SHUFFLE:
                start = route.start_for(src)
                for k in range(min(nt, n)):
                    per_task.setdefault(tasks[(start + k) % nt], []).extend(range(k, n, nt))
                route.next_by_src[src] = (start + n) % nt
            elif kind == FIELDS:
                column = hashes if width == 1 else hashes[route.key_column::width]
                buckets: list[list[int]] = [[] for _ in range(nt)]
                for i, h in enumerate(column):
                    buckets[h % nt].append(i)
                for t, rows in zip(tasks, buckets):
                    if rows:
                        per_task.setdefault(t, []).extend(rows)
        for rows in per_task.values():
            rows.sort()  # several routes to one task: keep emit order
        return list(per_task.items())
    pos = 0
    for i in range(n):
        c = counts[i]
        if c:
            for t in dests[pos:pos + c]:
                per_task.setdefault(t, []).append(i)
            pos += c
            continue
        for route in routes:
            tasks = route.tasks
            nt = len(tasks)
            if route.kind == ALL:
                chosen: Iterable[int] = tasks
            elif route.kind == LOWEST or (nt == 1 and route.kind != DIRECT):
                chosen = (tasks[0],)
            elif route.kind == SHUFFLE:
                start = route.start_for(src)
                chosen = (tasks[start % nt],)
                route.next_by_src[src] = (start + 1) % nt
            elif route.kind == FIELDS:
                chosen = (tasks[hashes[i * width + route.key_column] % nt],)
            else:
                chosen = ()
            for t in chosen:
                per_task.setdefault(t, []).append(i)
    return list(per_task.items())
