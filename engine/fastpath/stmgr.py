"""The Stream Manager's per-tuple work in pure Python: the reference the compiled twin
(``_stmgr.pyx``) must match result for result and error for error, and the fallback
where it is not built.

What runs per row at a Stream Manager lives here: splitting a batch per destination
task by its grouping (``split_batch``, ``split_indices``, ``rebatch``), the XOR
bookkeeping of tuple trees in rotating buckets (``RotatingXorMap``, ``XorManager``), and
the at-least-once work around it (``AckTracker``: a key per copy sent, emits and acks
applied or forwarded in order, completions and failures for the spouts, ``ControlOut``).
Building the routes from the plan stays in ``engine.stmgr.routing`` (once per plan, not
per tuple); callers import these names from ``engine.stmgr.routing``, ``.xor`` and
``.acking``, which hand out the selected implementation.

A batch whose columns do not agree with each other (a destination count for some rows
only, fewer key hashes than rows times their width, tree columns of other lengths than
their counts say) raises ``MalformedBatch`` before anything is routed or applied, so a
bad message changes no state and the Stream Manager drops it whole.
"""

from __future__ import annotations

import struct
import time
from random import randbytes
from typing import Any, Callable, Iterable

from engine.fastpath.markers import MalformedBatch
from engine.messages import tuple_pb2

#: False here, True in the compiled twin: which one a caller holds.
COMPILED = False

SHUFFLE, FIELDS, ALL, LOWEST, DIRECT = "shuffle", "fields", "all", "lowest", "direct"
ACK, FAIL, EMIT = tuple_pb2.ACK, tuple_pb2.FAIL, tuple_pb2.EMIT


def edge_keys(m: int) -> list[int]:
    """``m`` fresh keys for copies sent, random 64-bit and never 0, drawn with one call
    (``random.randbytes``, little-endian 8 bytes each): both twins draw the same ones."""
    if m <= 0:
        return []
    return [key or 1 for key in struct.unpack(f"<{m}Q", randbytes(8 * m))]


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
                chosen = (tasks[hashes[i * width + route.key_column] % nt],)
            else:
                chosen = ()
            for t in chosen:
                per_task.setdefault(t, []).append(i)
    return list(per_task.items())


# -- XOR tracking ----------------------------------------------------------------------
class RotatingXorMap:
    """Root key -> running XOR, in ``buckets`` generations (newest first)."""

    def __init__(self, buckets: int = 3) -> None:
        if buckets < 2:
            raise ValueError("a rotating map needs at least 2 buckets")
        self._buckets: list[dict[int, int]] = [{} for _ in range(buckets)]

    def __len__(self) -> int:
        return sum(len(b) for b in self._buckets)

    def _find(self, root: int) -> dict[int, int] | None:
        for bucket in self._buckets:
            if root in bucket:
                return bucket
        return None

    def xor(self, root: int, key: int) -> bool:
        """XOR ``key`` into ``root``'s value (creating it in the newest bucket); True when
        the value is now zero: the tree is complete and the entry is removed."""
        for bucket in self._buckets:
            value = bucket.get(root)
            if value is not None:  # stored values are never 0 (removed at 0)
                value ^= key
                if value:
                    bucket[root] = value
                    return False
                del bucket[root]
                return True
        if key == 0:
            return True  # nothing sent and nothing pending: complete at once
        self._buckets[0][root] = key
        return False

    def start_many(self, roots: Iterable[int], keys: Iterable[int]) -> list[int]:
        """Apply the first emits of new trees (a local spout's batch); the roots that
        complete at once (sent nowhere, key 0). Roots are fresh random 64-bit keys, so
        they go straight into the newest bucket (one already there is XORed; one in an
        older bucket, a 2^-64 collision, would be tracked twice and the stale copy
        forgotten by rotation)."""
        newest = self._buckets[0]
        get = newest.get
        complete = []
        for root, key in zip(roots, keys):
            if key:
                value = get(root, 0) ^ key
                if value:
                    newest[root] = value
                else:
                    del newest[root]
                    complete.append(root)
            elif self.xor(root, 0):  # sent nowhere (rare): the full lookup
                complete.append(root)
        return complete

    def remove(self, root: int) -> bool:
        """Forget ``root`` (a failed tree); True if it was tracked."""
        bucket = self._find(root)
        if bucket is None:
            return False
        del bucket[root]
        return True

    def rotate(self) -> int:
        """Drop the oldest bucket; returns how many entries were forgotten."""
        dropped = len(self._buckets[-1])
        self._buckets.pop()
        self._buckets.insert(0, {})
        return dropped


class XorManager:
    """One rotating map per local spout task, rotated on Heron's schedule: the first
    rotation after the message timeout, then every ``timeout / buckets`` seconds, so an
    entry lives between about one and ``1 + 1/buckets`` timeouts."""

    def __init__(self, spout_tasks: Iterable[int], timeout_secs: float, buckets: int = 3,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.maps = {task: RotatingXorMap(buckets) for task in spout_tasks}
        self.interval = timeout_secs / buckets
        self._clock = clock
        self._next_rotation = clock() + timeout_secs
        self.forgotten = 0

    def tracks(self, task: int) -> bool:
        return task in self.maps

    def xor(self, task: int, root: int, key: int) -> bool:
        """Apply an emit or an ack; True when the tree rooted at ``(task, root)`` completed."""
        tracked = self.maps.get(task)
        if tracked is None:
            return False
        return tracked.xor(root, key)

    def fail(self, task: int, root: int) -> bool:
        """A bolt failed a tuple of the tree: forget it; True if it was still pending (the
        spout is told once, however many of its tuples fail)."""
        tracked = self.maps.get(task)
        return tracked is not None and tracked.remove(root)

    def maybe_rotate(self) -> None:
        now = self._clock()
        if now < self._next_rotation:
            return
        self._next_rotation = now + self.interval
        for tracked in self.maps.values():
            self.forgotten += tracked.rotate()

    def pending(self) -> int:
        return sum(len(m) for m in self.maps.values())


# -- acking ----------------------------------------------------------------------------
class ControlOut:
    """Control entries waiting to go to one destination (a peer or a local spout), as
    ``(kind, root task, root key, tuple key)``; columns are built once, at encoding."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: list[tuple[int, int, int, int]] = []

    def add(self, kind: int, task: int, root: int, key: int) -> None:
        self.entries.append((kind, task, root, key))

    def __len__(self) -> int:
        return len(self.entries)

    def _column(self, index: int) -> list[int]:
        return [entry[index] for entry in self.entries]

    kinds = property(lambda self: self._column(0))
    root_tasks = property(lambda self: self._column(1))
    root_keys = property(lambda self: self._column(2))
    tuple_keys = property(lambda self: self._column(3))

    def encode(self, src_task: int) -> bytes:
        """The entries as one ``ControlBatch`` (one root each)."""
        return tuple_pb2.ControlBatch(src_task_id=src_task, kinds=self.kinds,
                                      root_counts=[1] * len(self.entries),
                                      root_tasks=self.root_tasks, root_keys=self.root_keys,
                                      tuple_keys=self.tuple_keys).SerializeToString()


class AckTracker:
    """Everything acking needs in one Stream Manager; the manager owns the sockets and
    asks :meth:`take_outgoing` for what to send."""

    def __init__(self, my_id: str, spout_tasks: list[int], timeout_secs: float,
                 owner_of: Callable[[int], str | None], buckets: int = 3) -> None:
        self.id = my_id
        self.xor = XorManager(spout_tasks, timeout_secs, buckets)
        self._owner_of = owner_of
        #: peer stream manager id -> entries for the roots it tracks
        self.to_peers: dict[str, ControlOut] = {}
        #: local spout task -> completed (ACK) or failed (FAIL) roots
        self.to_spouts: dict[int, ControlOut] = {}
        self.counts = {"acks_in": 0, "fails_in": 0, "completed": 0, "failed": 0,
                       "unknown_root": 0}

    # -- data ----------------------------------------------------------------------------
    def route_tracked(self, batch: Any, routes: list[Any]) -> list[tuple[int, bytes, int]]:
        """Split a batch that has tracked rows: ``[(task, sub-batch bytes, rows)]``, each
        copy with its own key, each root told of the copies."""
        check_tracked(batch)
        root_counts = batch.root_counts
        root_tasks = batch.root_tasks
        root_keys = batch.root_keys
        n = len(batch.values)
        src = batch.src_task_id
        spout_map = self.xor.maps.get(src)
        if (spout_map is not None and len(root_keys) == n and len(root_counts) == n
                and list(root_tasks).count(src) == n):
            return self._route_spout_batch(batch, routes, spout_map)
        # where each row's roots start in the flattened root columns
        starts = [0] * n
        pos = 0
        for i in range(n):
            starts[i] = pos
            pos += root_counts[i]
        combined = [0] * n  # XOR of the keys of every copy of row i
        out: list[tuple[int, bytes, int]] = []
        values = batch.values
        for task, rows in split_indices(batch, routes):
            sub = tuple_pb2.TupleBatch(src_task_id=batch.src_task_id)
            sub.stream.CopyFrom(batch.stream)
            sub_values = sub.values
            counts: list[int] = []
            tasks: list[int] = []
            keys: list[int] = []
            edges: list[int] = []
            # a key for each copy of a tracked row, drawn for the sub-batch at once
            fresh = iter(edge_keys(sum(1 for i in rows if root_counts[i])))
            for i in rows:
                sub_values.append(values[i])
                c = root_counts[i]
                counts.append(c)
                if c:
                    s = starts[i]
                    tasks.extend(root_tasks[s:s + c])
                    keys.extend(root_keys[s:s + c])
                    edge = next(fresh)
                    combined[i] ^= edge
                    edges.append(edge)
                else:
                    edges.append(0)
            sub.root_counts.extend(counts)
            sub.root_tasks.extend(tasks)
            sub.root_keys.extend(keys)
            sub.edge_keys.extend(edges)
            out.append((task, sub.SerializeToString(), len(rows)))
        from_spout = batch.src_task_id
        for i in range(n):
            c = root_counts[i]
            if not c:
                continue
            key = combined[i]
            s = starts[i]
            for j in range(s, s + c):
                task = root_tasks[j]
                # a spout's row sent nowhere still registers (key 0): its tree is complete
                # at once; a bolt's row sent nowhere changes nothing
                if key or task == from_spout:
                    self._apply(EMIT, task, root_keys[j], key)
        return out

    def _route_spout_batch(self, batch: Any, routes: list[Any],
                           spout_map: RotatingXorMap) -> list[tuple[int, bytes, int]]:
        """``route_tracked`` for the common batch: a local spout's, every row the root
        of its own new tree. Columns are built in bulk and the trees start in one call."""
        n = len(batch.values)
        values = batch.values
        root_keys = list(batch.root_keys)
        src = batch.src_task_id
        combined = [0] * n
        out: list[tuple[int, bytes, int]] = []
        for task, rows in split_indices(batch, routes):
            m = len(rows)
            edges = edge_keys(m)
            for i, edge in zip(rows, edges):
                combined[i] ^= edge
            sub = tuple_pb2.TupleBatch(src_task_id=src, values=[values[i] for i in rows],
                                       root_counts=[1] * m, root_tasks=[src] * m,
                                       root_keys=[root_keys[i] for i in rows], edge_keys=edges)
            sub.stream.CopyFrom(batch.stream)
            out.append((task, sub.SerializeToString(), m))
        for root in spout_map.start_many(root_keys, combined):
            self._to_spout(src).add(ACK, src, root, 0)
            self.counts["completed"] += 1
        return out

    # -- control -------------------------------------------------------------------------
    def on_control(self, batch: Any) -> None:
        """Entries from a local bolt (ACK/FAIL, maybe several roots each) or from a peer
        (EMIT/ACK/FAIL, one root each), applied in order."""
        check_control(batch)
        kinds = batch.kinds
        counts = batch.root_counts
        tasks = batch.root_tasks
        roots = batch.root_keys
        keys = batch.tuple_keys
        n = len(kinds)
        if (len(roots) == n and len(keys) == n and len(tasks) == n
                and (not len(counts) or list(counts).count(1) == n)):
            self._on_single_root_entries(kinds, tasks, roots, keys)
            return
        pos = 0
        for i, kind in enumerate(kinds):
            c = counts[i] if i < len(counts) else 1
            key = keys[i] if i < len(keys) else 0
            if kind == ACK:
                self.counts["acks_in"] += 1
            elif kind == FAIL:
                self.counts["fails_in"] += 1
            for j in range(pos, pos + c):
                self._apply(kind, tasks[j], roots[j], key)
            pos += c

    def _on_single_root_entries(self, kinds: Any, tasks: Any, roots: Any, keys: Any) -> None:
        """``on_control`` for entries of one root each (a bolt's acks of spout tuples,
        a peer's entries): ``_apply`` per entry, with the lookups done once per batch and
        the common case, a root in the newest bucket, XORed in place."""
        maps = self.xor.maps
        counts = self.counts
        #: root task -> the entry list of the peer tracking it (None: nobody known)
        forward: dict[int, list | None] = {}
        #: local spout task -> its map's newest bucket
        local: dict[int, dict] = {}
        #: local spout task -> its completion entries (made on the first completion only)
        done_of: dict[int, list] = {}
        acks = completed = 0
        for kind, task, root, key in zip(kinds, tasks, roots, keys):
            if kind == FAIL:
                counts["fails_in"] += 1
                self._apply(kind, task, root, key)
                continue
            if kind == ACK:
                acks += 1
            newest = local.get(task)
            if newest is None and task in maps:
                newest = local[task] = maps[task]._buckets[0]
            if newest is not None:
                value = newest.get(root)
                if value is not None:
                    value ^= key
                    if value:
                        newest[root] = value
                        continue
                    del newest[root]
                elif not maps[task].xor(root, key):  # an older bucket, or a new tree
                    continue
                done = done_of.get(task)
                if done is None:
                    done = done_of[task] = self._to_spout(task).entries
                done.append((ACK, task, root, 0))
                completed += 1
                continue
            entries = forward.get(task, self)
            if entries is self:
                entries = forward[task] = self._peer_entries(task)
            if entries is None:
                counts["unknown_root"] += 1
            else:
                entries.append((kind, task, root, key))
        counts["acks_in"] += acks
        counts["completed"] += completed

    def _peer_entries(self, task: int) -> list | None:
        """The pending entry list for the peer tracking ``task``'s trees, or None."""
        owner = self._owner_of(task)
        if owner is None or owner == self.id:
            return None
        pending = self.to_peers.get(owner)
        if pending is None:
            pending = self.to_peers[owner] = ControlOut()
        return pending.entries

    def _apply(self, kind: int, task: int, root: int, key: int) -> None:
        xor = self.xor
        if xor.tracks(task):
            if kind == FAIL:
                if xor.fail(task, root):
                    self._to_spout(task).add(FAIL, task, root, 0)
                    self.counts["failed"] += 1
            elif xor.xor(task, root, key):
                self._to_spout(task).add(ACK, task, root, 0)
                self.counts["completed"] += 1
            return
        entries = self._peer_entries(task)
        if entries is None:
            self.counts["unknown_root"] += 1
            return
        entries.append((kind, task, root, key))

    def _to_spout(self, task: int) -> ControlOut:
        pending = self.to_spouts.get(task)
        if pending is None:
            pending = self.to_spouts[task] = ControlOut()
        return pending

    def take_outgoing(self) -> tuple[dict[str, ControlOut], dict[int, ControlOut]]:
        """What waits for peers and for local spouts; the caller sends it."""
        self.xor.maybe_rotate()
        peers, spouts = self.to_peers, self.to_spouts
        if peers:
            self.to_peers = {}
        if spouts:
            self.to_spouts = {}
        return peers, spouts

    def has_outgoing(self) -> bool:
        return bool(self.to_peers or self.to_spouts)
