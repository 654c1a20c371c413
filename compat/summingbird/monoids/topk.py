"""Top-k: the k largest items seen (Algebird's ``TopKMonoid``, largest-first).

Items are ordered by ``(key(item), item)``, a total order, so ties never depend on
which side of ``plus`` an item came from and the monoid is exactly commutative. Items
that tie on ``key`` must therefore be comparable themselves.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from .base import Monoid


class TopK(Monoid[tuple[Any, ...]]):
    """Values are tuples of at most ``k`` items, largest first; ``of(x)`` is ``(x,)``."""

    commutative = True

    def __init__(self, k: int, key: Callable[[Any], Any] | None = None) -> None:
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"TopK needs k >= 1, got {k!r}")
        self.k = k
        self.key = key

    def _order(self, item: Any) -> Any:
        return item if self.key is None else (self.key(item), item)

    @property
    def zero(self) -> tuple[Any, ...]:
        return ()

    def plus(self, left: tuple[Any, ...], right: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(heapq.nlargest(self.k, left + right, key=self._order))

    def sum_option(self, items: Any) -> tuple[Any, ...] | None:
        values = list(items)
        if not values:
            return None
        return tuple(heapq.nlargest(self.k, (x for v in values for x in v), key=self._order))

    # Algebird's naming: a concrete monoid's ``of`` makes one value, where the base
    # classes' ``of`` makes a monoid from functions
    @staticmethod
    def of(  # type: ignore[override]
        item: Any
    ) -> tuple[Any, ...]:
        """One item."""
        return (item,)

    def _params(self) -> tuple[Any, ...]:
        return (self.k, self.key)
