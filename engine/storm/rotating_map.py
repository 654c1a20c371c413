"""Storm's RotatingMap: entries expire after between (n-1) and n rotations.

Storm keeps pending spout tuples and acker entries in one, rotated on system ticks, so
an expired root is found without scanning every entry: rotation drops the oldest
bucket whole and returns it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class RotatingMap(Generic[K, V]):
    def __init__(self, buckets: int = 3) -> None:
        if buckets < 2:
            raise ValueError("a RotatingMap needs at least 2 buckets")
        self._buckets: deque[dict[K, V]] = deque({} for _ in range(buckets))

    def put(self, key: K, value: V) -> None:
        """Insert into the newest bucket, removing the key from older ones."""
        it = iter(self._buckets)
        head = next(it)
        head[key] = value
        for bucket in it:
            bucket.pop(key, None)

    def get(self, key: K) -> V | None:
        for bucket in self._buckets:
            if key in bucket:
                return bucket[key]
        return None

    def __contains__(self, key: object) -> bool:
        return any(key in b for b in self._buckets)

    def pop(self, key: K) -> V | None:
        for bucket in self._buckets:
            if key in bucket:
                return bucket.pop(key)
        return None

    def rotate(self) -> dict[K, V]:
        """Drop the oldest bucket and return what expired."""
        expired = self._buckets.pop()
        self._buckets.appendleft({})
        return expired

    def __len__(self) -> int:
        return sum(len(b) for b in self._buckets)
