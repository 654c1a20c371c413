"""The Stream Manager's part of at-least-once, in pure Python: the reference the compiled
twin (``_acking.pyx``) matches result for result, and the fallback where it is not built
(``engine.common.codec.selected_module("acking")`` says which runs).

Batches carry tuple trees as columns (``root_counts``/``root_tasks``/``root_keys`` per
row; ``edge_keys`` per delivered copy), so a batch with no tracked rows costs nothing
here. For each copy sent, a fresh random 64-bit key (``edge_keys``) goes into the copy
(the receiving bolt acks it) and is XORed into every root of the row: directly into this
manager's ``XorManager`` (``xor.py``) for its own spouts, otherwise as an ``EMIT`` entry
to the root's Stream Manager. Entries for one peer are kept in order in one pending
``ControlOut``, so a bolt's emits always reach the root's manager before that bolt's ack
of the anchoring tuple; completions and failures go to the local spouts
(``AckTracker``). A batch whose tree columns disagree raises ``MalformedBatch`` before
anything changes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from random import randbytes
from typing import Any

from engine.common.codec.path_counts import path_counts as path_counts
from engine.common.codec.path_counts import reset_path_counts as reset_path_counts
from engine.messages import tuple_pb2
from engine.stmgr.routing import check_control, check_tracked, split_indices
from engine.stmgr.xor import RotatingXorMap, XorManager

ACK, FAIL, EMIT = tuple_pb2.ACK, tuple_pb2.FAIL, tuple_pb2.EMIT


def edge_keys(m: int) -> list[int]:
    """``m`` fresh keys for copies sent, random 64-bit and never 0, drawn with one call
    (``random.randbytes``, little-endian 8 bytes each): both twins draw the same ones."""
    if m <= 0:
        return []
    return [key or 1 for key in struct.unpack(f"<{m}Q", randbytes(8 * m))]


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
                # not self: replaced by the peer's entries above (a sentinel the checker
                # does not narrow)
                entries.append((kind, task, root, key))  # type: ignore[union-attr]
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


#: False here, True in the compiled twin: which one a caller holds.
COMPILED = False
