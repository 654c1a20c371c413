"""The everyday value types of a Summingbird job: numbers, extremes, sets, maps, tuples, means."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, NamedTuple, TypeVar

from .base import Monoid, Semigroup

T = TypeVar("T")


class Sum(Monoid[Any]):
    """Numeric addition (counts, totals). Float sums are only approximately associative."""

    commutative = True

    @property
    def zero(self) -> int:
        return 0

    def plus(self, left: Any, right: Any) -> Any:
        return left + right

    def sum_option(self, items: Iterable[Any]) -> Any:
        iterator = iter(items)
        for first in iterator:
            return sum(iterator, first)
        return None


class Max(Semigroup[Any]):
    """The larger value (a semilattice: commutative and idempotent; no zero)."""

    commutative = True

    def plus(self, left: Any, right: Any) -> Any:
        return max(left, right)


class Min(Semigroup[Any]):
    """The smaller value (a semilattice: commutative and idempotent; no zero)."""

    commutative = True

    def plus(self, left: Any, right: Any) -> Any:
        return min(left, right)


class First(Semigroup[Any]):
    """The earliest value seen: not commutative, so only order-preserving platforms agree."""

    commutative = False

    def plus(self, left: Any, right: Any) -> Any:
        return left


class Last(Semigroup[Any]):
    """The latest value seen: not commutative, so only order-preserving platforms agree."""

    commutative = False

    def plus(self, left: Any, right: Any) -> Any:
        return right


class SetUnion(Monoid[frozenset[Any]]):
    """Union of frozensets (distinct values, exactly). ``of(x)`` makes a one-element set."""

    commutative = True

    @property
    def zero(self) -> frozenset[Any]:
        return frozenset()

    def plus(self, left: frozenset[Any], right: frozenset[Any]) -> frozenset[Any]:
        return frozenset(left) | frozenset(right)

    # Algebird's naming: a concrete monoid's ``of`` makes one value, where the base
    # classes' ``of`` makes a monoid from functions
    @staticmethod
    def of(*items: Hashable) -> frozenset[Any]:  # type: ignore[override]
        return frozenset(items)


class MapMerge(Monoid[dict[str, Any]]):
    """Key-wise ``plus`` of dicts with a value semigroup (Algebird's ``MapMonoid``).

    When the value type is a monoid, keys whose sum is zero are dropped, so zero and
    absent stay the same thing. Commutative exactly when the value semigroup is.
    """

    def __init__(self, values: Semigroup[Any]) -> None:
        if not callable(getattr(values, "plus", None)):
            raise TypeError(f"MapMerge needs a value semigroup, got {values!r}")
        self.values = values
        self.commutative = bool(getattr(values, "commutative", False))

    @property
    def zero(self) -> dict[str, Any]:
        return {}

    def plus(self, left: Mapping[Any, Any], right: Mapping[Any, Any]) -> dict[str, Any]:
        out = dict(left)
        # the value monoid whose zeros are dropped; None for a plain semigroup
        monoid = self.values if isinstance(self.values, Monoid) else None
        for key, value in right.items():
            if key in out:
                value = self.values.plus(out[key], value)
            if monoid is not None and monoid.is_zero(value):
                out.pop(key, None)
            else:
                out[key] = value
        return out

    def _params(self) -> tuple[Any, ...]:
        return (self.values,)


class ProductSemigroup(Semigroup[tuple[Any, ...]]):
    """Component-wise ``plus`` of fixed-length tuples (several aggregates in one value)."""

    def __init__(self, *parts: Semigroup[Any]) -> None:
        if not parts:
            raise TypeError(f"{type(self).__name__} needs at least one semigroup")
        for i, part in enumerate(parts):
            if not callable(getattr(part, "plus", None)):
                raise TypeError(f"{type(self).__name__}: component {i} ({part!r}) has no plus()")
        self.parts = tuple(parts)
        self.commutative = all(getattr(p, "commutative", False) for p in parts)

    def plus(self, left: tuple[Any, ...], right: tuple[Any, ...]) -> tuple[Any, ...]:
        if len(left) != len(self.parts) or len(right) != len(self.parts):
            raise ValueError(f"{self!r} sums tuples of {len(self.parts)} components, got "
                             f"{len(left)} and {len(right)}")
        return tuple(p.plus(a, b) for p, a, b in zip(self.parts, left, right))

    def _params(self) -> tuple[Any, ...]:
        return self.parts


class Product(ProductSemigroup, Monoid[tuple[Any, ...]]):
    """A tuple of monoids is a monoid: ``zero`` is the tuple of zeros."""

    def __init__(self, *parts: Monoid[Any]) -> None:
        for i, part in enumerate(parts):
            if not isinstance(part, Monoid):
                raise TypeError(f"Product: component {i} ({part!r}) is not a Monoid; "
                                "use ProductSemigroup for semigroups such as Max()")
        super().__init__(*parts)

    @property
    def zero(self) -> tuple[Any, ...]:
        # parts are typed as semigroups (ProductSemigroup's); __init__ took only monoids
        return tuple(p.zero for p in self.parts)  # type: ignore[attr-defined]


class AveragedValue(NamedTuple):
    """A count and the mean of that many numbers (Algebird's ``AveragedValue``)."""

    # Algebird's field name, which shadows tuple.count as in any namedtuple with it
    count: int  # type: ignore[assignment]
    mean: float


class Averaged(Monoid[AveragedValue]):
    """Running mean: counts add, means combine weighted by count.

    The combined mean ``(na*ma + nb*mb) / (na + nb)`` is symmetric in its arguments, so
    the monoid is exactly commutative; with floats it is associative up to rounding.
    """

    commutative = True

    @property
    def zero(self) -> AveragedValue:
        return AveragedValue(0, 0.0)

    def plus(self, left: AveragedValue, right: AveragedValue) -> AveragedValue:
        n_left, m_left = left
        n_right, m_right = right
        if n_left == 0:
            return AveragedValue(n_right, m_right)
        if n_right == 0:
            return AveragedValue(n_left, m_left)
        count = n_left + n_right
        return AveragedValue(count, (n_left * m_left + n_right * m_right) / count)

    def is_zero(self, value: AveragedValue) -> bool:
        return value[0] == 0

    # Algebird's naming: a concrete monoid's ``of`` makes one value, where the base
    # classes' ``of`` makes a monoid from functions
    @staticmethod
    def of(x: float) -> AveragedValue:  # type: ignore[override]
        """One observation."""
        return AveragedValue(1, float(x))
