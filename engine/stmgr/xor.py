"""XOR tracking of tuple trees for the spouts local to one Stream Manager, in pure Python:
the reference the compiled twin (``_xor.pyx``) matches result for result, and the
fallback where it is not built (``engine.common.codec.selected_module("xor")`` says which runs).

Heron's scheme (Storm's acker, moved into the Stream Manager): a spout tuple's tree is
identified by its root key; every copy of a tuple sent anywhere in the tree gets a random
64-bit key, XORed into the root's value once when the copy is sent (an *emit*) and once
when a bolt acks it. The value returns to zero exactly when every copy has been acked,
whatever order the updates arrive in, except that an ack must not be applied before the
emits of the tuples the acking bolt anchored to it (the Stream Manager applies a bolt's
emits before its acks: both travel the same path, in order).

Entries live in rotating generations (``RotatingXorMap``), one map per local spout task
(``XorManager``): a tree that never completes (a dropped tuple, a dead bolt) is forgotten
after about ``topology.message.timeout.secs``; the spout instance enforces the timeout
itself and fails the tuple, so nothing is reported here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from engine.common.codec.path_counts import path_counts as path_counts
from engine.common.codec.path_counts import reset_path_counts as reset_path_counts


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


#: False here, True in the compiled twin: which one a caller holds.
COMPILED = False
