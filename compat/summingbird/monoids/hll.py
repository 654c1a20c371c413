"""HyperLogLog: approximate distinct counts that merge by register-wise max.

A bounded semilattice (commutative, associative, idempotent), which is why Summingbird
jobs use it for "unique users per page" across any number of workers. Registers are
kept sparse (only non-zero ones), so a sketch of one item is one entry and merging
costs the number of non-zero registers; the representation is canonical, so two
sketches of the same registers compare equal however they were built.
"""

from __future__ import annotations

import math
from typing import Any

from .base import Monoid
from .hashing import hash64

_MASK64 = (1 << 64) - 1


class HLLSketch:
    """An immutable HyperLogLog sketch: ``bits`` (2**bits registers) and its registers."""

    __slots__ = ("_registers", "bits")

    def __init__(self, bits: int, registers: dict[int, int] | None = None) -> None:
        self.bits = bits
        self._registers = dict(registers) if registers else {}

    @property
    def registers(self) -> dict[int, int]:
        """A copy of the non-zero registers, index -> rank."""
        return dict(self._registers)

    def estimate(self) -> float:
        """Approximate number of distinct items added."""
        m = 1 << self.bits
        zeros = m - len(self._registers)
        harmonic = zeros + sum(2.0 ** -rank for rank in self._registers.values())
        alpha = {16: 0.673, 32: 0.697, 64: 0.709}.get(m, 0.7213 / (1 + 1.079 / m))
        raw = alpha * m * m / harmonic
        if raw <= 2.5 * m and zeros:
            return m * math.log(m / zeros)  # linear counting for small cardinalities
        return raw

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, HLLSketch) and self.bits == other.bits
                and self._registers == other._registers)

    def __hash__(self) -> int:
        return hash((self.bits, frozenset(self._registers.items())))

    def __repr__(self) -> str:
        return (
            f"HLLSketch(bits={self.bits}, registers={len(self._registers)}, ~{self.estimate():.1f})"
        )

    def __getstate__(self) -> tuple[int, dict[int, int]]:
        return (self.bits, self._registers)

    def __setstate__(self, state: tuple[int, dict[int, int]]) -> None:
        self.bits, self._registers = state


class HyperLogLog(Monoid[HLLSketch]):
    """The monoid of sketches with ``bits`` index bits (4..16; error ≈ 1.04/sqrt(2**bits))."""

    commutative = True

    def __init__(self, bits: int = 12) -> None:
        if not isinstance(bits, int) or not 4 <= bits <= 16:
            raise ValueError(f"HyperLogLog bits must be an int in 4..16, got {bits!r}")
        self.bits = bits

    @property
    def zero(self) -> HLLSketch:
        return HLLSketch(self.bits)

    def create(self, *items: Any) -> HLLSketch:
        """A sketch of ``items``."""
        registers: dict[int, int] = {}
        width = 64 - self.bits
        for item in items:
            h = hash64(item)
            index = h >> width
            rest = (h << self.bits) & _MASK64
            rank = min(64 - rest.bit_length() + 1, width + 1)
            if rank > registers.get(index, 0):
                registers[index] = rank
        return HLLSketch(self.bits, registers)

    def _check(self, sketch: HLLSketch) -> None:
        if not isinstance(sketch, HLLSketch) or sketch.bits != self.bits:
            found = getattr(sketch, "bits", type(sketch).__name__)
            raise ValueError(f"HyperLogLog(bits={self.bits}) cannot merge a sketch with "
                             f"bits={found}; every sketch in one store must share bits")

    def plus(self, left: HLLSketch, right: HLLSketch) -> HLLSketch:
        self._check(left)
        self._check(right)
        if len(left._registers) < len(right._registers):
            left, right = right, left
        merged = dict(left._registers)
        for index, rank in right._registers.items():
            if rank > merged.get(index, 0):
                merged[index] = rank
        return HLLSketch(self.bits, merged)

    def is_zero(self, value: HLLSketch) -> bool:
        return not value._registers

    def estimate(self, sketch: HLLSketch) -> float:
        """Approximate distinct count of ``sketch``."""
        return sketch.estimate()

    def _params(self) -> tuple[Any, ...]:
        return (self.bits,)
