"""Count-min sketch: approximate per-item frequencies that merge by cell-wise addition.

With width ``ceil(e/eps)`` and depth ``ceil(ln(1/delta))``, an estimate exceeds the
true count by more than ``eps * total`` with probability at most ``delta``, and never
undercounts. Sketches merge only with sketches of the same (eps, delta, seed), which
the monoid checks. Cells are kept sparse and canonical, as in the HyperLogLog module.
"""

from __future__ import annotations

import math
from typing import Any

from .base import Monoid
from .hashing import hash64


class CMSketch:
    """An immutable count-min sketch: its shape, seed, non-zero cells and total count."""

    __slots__ = ("_cells", "depth", "seed", "total", "width")

    def __init__(self, width: int, depth: int, seed: int, cells: dict[int, int] | None = None,
                 total: int = 0) -> None:
        self.width = width
        self.depth = depth
        self.seed = seed
        self.total = total
        self._cells = dict(cells) if cells else {}

    def _shape(self) -> tuple[int, int, int]:
        return (self.width, self.depth, self.seed)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, CMSketch) and self._shape() == other._shape()
                and self.total == other.total and self._cells == other._cells)

    def __hash__(self) -> int:
        return hash((self._shape(), self.total, frozenset(self._cells.items())))

    def __repr__(self) -> str:
        return (f"CMSketch(width={self.width}, depth={self.depth}, seed={self.seed}, "
                f"total={self.total})")

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.width, self.depth, self.seed, self.total, self._cells)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.width, self.depth, self.seed, self.total, self._cells = state


class CountMinSketch(Monoid[CMSketch]):
    """The monoid of count-min sketches for error ``eps``, confidence ``delta``, ``seed``."""

    commutative = True

    def __init__(self, eps: float = 0.001, delta: float = 0.01, seed: int = 1) -> None:
        if not 0 < eps < 1 or not 0 < delta < 1:
            raise ValueError(f"CountMinSketch needs 0 < eps < 1 and 0 < delta < 1, "
                             f"got eps={eps!r}, delta={delta!r}")
        self.eps = eps
        self.delta = delta
        self.seed = int(seed)
        self.width = math.ceil(math.e / eps)
        self.depth = math.ceil(math.log(1 / delta))
        self._keys = [f"{self.seed}:{row}".encode() for row in range(self.depth)]

    @property
    def zero(self) -> CMSketch:
        return CMSketch(self.width, self.depth, self.seed)

    def _cells_of(self, item: Any) -> list[int]:
        return [row * self.width + hash64(item, key) % self.width
                for row, key in enumerate(self._keys)]

    def create(self, item: Any, count: int = 1) -> CMSketch:
        """A sketch of ``count`` occurrences of ``item``."""
        if not isinstance(count, int) or count < 0:
            raise ValueError(f"CountMinSketch.create needs a count >= 0, got {count!r}")
        return CMSketch(self.width, self.depth, self.seed,
                        {cell: count for cell in self._cells_of(item)} if count else None, count)

    def frequency(self, sketch: CMSketch, item: Any) -> int:
        """Estimated occurrences of ``item`` (never below the true count)."""
        self._check(sketch)
        return min(sketch._cells.get(cell, 0) for cell in self._cells_of(item))

    def _check(self, sketch: CMSketch) -> None:
        if not isinstance(sketch, CMSketch) or sketch._shape() != (
            self.width,
            self.depth,
            self.seed,
        ):
            shape = sketch._shape() if isinstance(sketch, CMSketch) else type(sketch).__name__
            raise ValueError(f"{self!r} cannot merge a sketch of shape {shape}; every sketch "
                             "in one store must share eps, delta and seed")

    def plus(self, left: CMSketch, right: CMSketch) -> CMSketch:
        self._check(left)
        self._check(right)
        if len(left._cells) < len(right._cells):
            left, right = right, left
        cells = dict(left._cells)
        for cell, count in right._cells.items():
            cells[cell] = cells.get(cell, 0) + count
        return CMSketch(self.width, self.depth, self.seed, cells, left.total + right.total)

    def is_zero(self, value: CMSketch) -> bool:
        return value.total == 0 and not value._cells

    def _params(self) -> tuple[Any, ...]:
        return (self.eps, self.delta, self.seed)
