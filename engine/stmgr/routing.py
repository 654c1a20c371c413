"""The Stream Manager's routing in pure Python: the checks a batch passes before anything
is done with it, and splitting it per destination task by each consumer's grouping
(``split_batch``, ``split_indices``, ``rebatch``, ``split_rebatched``). The reference the
compiled twin (``_routing.pyx``) must match result for result, and the fallback where it
is not built; the compiled twin calls these checks themselves, so a malformed batch is
refused with the same words on both paths. Which twin runs is the switch's
(``engine.common.codec.selected_module("routing")``); building the routes from the plan, once
per plan, is ``routes.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.common.codec.markers import MalformedBatch
from engine.common.codec.path_counts import path_counts as path_counts
from engine.common.codec.path_counts import reset_path_counts as reset_path_counts
from engine.messages import tuple_pb2

SHUFFLE, FIELDS, ALL, LOWEST, DIRECT = "shuffle", "fields", "all", "lowest", "direct"


# -- checking a batch before anything is done with it ----------------------------------
def _describe(batch: Any) -> str:
    return (f"TupleBatch of {batch.stream.component_name}/{batch.stream.id} from task "
            f"{batch.src_task_id}")


def check_routing(batch: Any, routes: Iterable[Any]) -> None:
    """Raise ``MalformedBatch`` unless the columns routing reads agree with the rows:
    destination counts one per row summing to the destination tasks, and for a fields
    grouping over several tasks a hash per row and key column."""
    n = len(batch.values)
    counts = batch.dest_counts
    if len(counts):
        if len(counts) != n:
            raise MalformedBatch(f"{_describe(batch)}: {len(counts)} destination counts for "
                                 f"{n} rows")
        if sum(counts) != len(batch.dest_tasks):
            raise MalformedBatch(f"{_describe(batch)}: destination counts sum to "
                                 f"{sum(counts)}, {len(batch.dest_tasks)} destination tasks")
    for route in routes:
        if route.kind == FIELDS and len(route.tasks) > 1:
            width = batch.key_hash_width or 1
            if not 0 <= route.key_column < width:
                raise MalformedBatch(f"{_describe(batch)}: key column {route.key_column} of "
                                     f"{route.consumer!r} is outside the key hash width {width}")
            if len(batch.key_hashes) != n * width:
                raise MalformedBatch(f"{_describe(batch)}: {len(batch.key_hashes)} key hashes "
                                     f"for {n} rows of width {width}")


def check_tracked(batch: Any) -> None:
    """Raise ``MalformedBatch`` unless the tree columns agree: a root count per row, and
    as many root tasks and root keys as the counts sum to."""
    n = len(batch.values)
    counts = batch.root_counts
    if len(counts) != n:
        raise MalformedBatch(f"{_describe(batch)}: {len(counts)} root counts for {n} rows")
    total = sum(counts)
    if total != len(batch.root_tasks) or total != len(batch.root_keys):
        raise MalformedBatch(f"{_describe(batch)}: root counts sum to {total}, "
                             f"{len(batch.root_tasks)} root tasks and {len(batch.root_keys)} "
                             "root keys")


def check_control(batch: Any) -> None:
    """Raise ``MalformedBatch`` when the entries name more roots than the batch holds (an
    entry without a count has one root, as before: the columns are otherwise lenient)."""
    n = len(batch.kinds)
    counts = batch.root_counts
    need = sum(counts[:n]) + max(0, n - len(counts))
    if need > len(batch.root_tasks) or need > len(batch.root_keys):
        raise MalformedBatch(f"ControlBatch from task {batch.src_task_id}: its entries name "
                             f"{need} roots, it holds {len(batch.root_tasks)} root tasks and "
                             f"{len(batch.root_keys)} root keys")


# -- routing ---------------------------------------------------------------------------
def _start_for(route: Any, src: int) -> int:
    """Where a shuffle to ``route`` from task ``src`` continues its round robin (a random
    start the first time); ``ConsumerRoute.start_for``."""
    pos = route.next_by_src.get(src)
    if pos is None:
        pos = route.rng.randrange(len(route.tasks))
    return pos


def split_batch(batch: Any, payload: bytes, routes: Iterable[Any]
                ) -> list[tuple[int, bytes | list[bytes]]]:
    """``[(task, payload_or_values)]``: the original payload when a task gets the whole
    batch (nothing to re-encode), else the list of value blobs it gets."""
    out: list[tuple[int, bytes | list[bytes]]] = []
    values = batch.values
    n = len(values)
    if not n:
        return out
    routes = list(routes)
    check_routing(batch, routes)
    if len(batch.dest_counts):
        return [(task, [values[i] for i in rows]) for task, rows in split_indices(batch, routes)]
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
            start = _start_for(route, src)
            vals = list(values)
            for k in range(min(nt, n)):
                out.append((tasks[(start + k) % nt], vals[k::nt]))
            route.next_by_src[src] = (start + n) % nt
        elif kind == FIELDS:
            width = batch.key_hash_width or 1
            hashes = batch.key_hashes
            column = hashes if width == 1 else hashes[route.key_column::width]
            table = getattr(route, "key_groups", None)
            if table is not None:  # by key group: the owner of the key's group
                groups = len(table)
                per_owner: dict[int, list[bytes]] = {}
                for v, h in zip(values, column):
                    per_owner.setdefault(table[h % groups], []).append(v)
                out.extend(per_owner.items())
                continue
            buckets: list[list[bytes]] = [[] for _ in range(nt)]
            for v, h in zip(values, column):
                buckets[h % nt].append(v)
            out.extend((tasks[i], b) for i, b in enumerate(buckets) if b)
        # DIRECT without explicit destinations: nothing (the emitter names the task)
    return out


def rebatch(batch: Any, values: list[bytes]) -> bytes:
    """A batch of the same stream and source holding ``values`` (no hash columns: the
    receiver is an instance, which needs only the values)."""
    out = tuple_pb2.TupleBatch(src_task_id=batch.src_task_id, values=values)
    out.stream.CopyFrom(batch.stream)
    return out.SerializeToString()


def split_rebatched(batch: Any, payload: bytes, routes: Iterable[Any]
                    ) -> list[tuple[int, bytes, int]]:
    """``[(task, batch payload, rows)]``: ``split_batch`` with each part that is a list of
    values rebatched, and each part's row count (the Stream Manager's at-most-once
    route; the compiled twin writes the parts straight from the payload's bytes)."""
    n = len(batch.values)
    return [(task, rebatch(batch, part), len(part)) if isinstance(part, list) else (task, part, n)
            for task, part in split_batch(batch, payload, routes)]


def split_indices(batch: Any, routes: Iterable[Any]) -> list[tuple[int, list[int]]]:
    """``[(task, row indices)]``: the tracked (at-least-once) path, where every copy needs
    its own key and its tuple's roots, so destinations are worked out per row."""
    routes = list(routes)
    n = len(batch.values)
    if not n:
        return []
    check_routing(batch, routes)
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
                start = _start_for(route, src)
                for k in range(min(nt, n)):
                    per_task.setdefault(tasks[(start + k) % nt], []).extend(range(k, n, nt))
                route.next_by_src[src] = (start + n) % nt
            elif kind == FIELDS:
                column = hashes if width == 1 else hashes[route.key_column::width]
                table = getattr(route, "key_groups", None)
                if table is not None:  # by key group: the owner of the key's group
                    groups = len(table)
                    for i, h in enumerate(column):
                        per_task.setdefault(table[h % groups], []).append(i)
                    continue
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
                start = _start_for(route, src)
                chosen = (tasks[start % nt],)
                route.next_by_src[src] = (start + 1) % nt
            elif route.kind == FIELDS:
                h = hashes[i * width + route.key_column]
                table = getattr(route, "key_groups", None)
                chosen = (table[h % len(table)],) if table is not None else (tasks[h % nt],)
            else:
                chosen = ()
            for t in chosen:
                per_task.setdefault(t, []).append(i)
    return list(per_task.items())


#: False here, True in the compiled twin: which one a caller holds.
COMPILED = False
