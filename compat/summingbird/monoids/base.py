"""Semigroups and monoids: what ``sum_by_key`` needs to know about a value type.

Summingbird's stores only ever ``plus`` a delta into what they hold, so a value type is
described by its ``plus`` (associative, so partial sums can be taken anywhere) and,
for a monoid, a ``zero``. Unlike Algebird, commutativity is a declared, checked
attribute of each instance rather than a job option (Summingbird's ``MonoidIsCommutative``
defaulted to "no", and issue #677 showed how a store and a job can silently disagree):
the batch platform pre-aggregates with ``reduceByKey`` only when it is declared, and the
streaming planner can refuse non-commutative summers.

``plus`` must not mutate its arguments: the memory platform emits the store's previous
value downstream, and a mutated one would rewrite history.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Semigroup(ABC, Generic[T]):
    """An associative ``plus``; ``commutative`` says whether argument order matters."""

    commutative: bool = False

    @abstractmethod
    def plus(self, left: T, right: T) -> T:
        """Combine two values; must be associative and must not mutate either."""

    def sum_option(self, items: Iterable[T]) -> T | None:
        """The left fold of ``items`` with ``plus``, or ``None`` when there are none.

        Override it when a bulk sum is cheaper than repeated ``plus`` (Algebird's
        ``sumOption``); the laws check that it equals the fold.
        """
        iterator = iter(items)
        for first in iterator:
            return functools.reduce(self.plus, iterator, first)
        return None

    # Two instances are interchangeable when they are of the same class with the same
    # parameters: a store bound to Sum() accepts another Sum().
    def _params(self) -> tuple[Any, ...]:
        return ()

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._params() == other._params()

    def __hash__(self) -> int:
        return hash(type(self).__qualname__)  # parameters may be unhashable (a dict zero)

    def __repr__(self) -> str:
        params = ", ".join(repr(p) for p in self._params())
        return f"{type(self).__name__}({params})"

    @staticmethod
    def of(plus: Callable[[T, T], T], commutative: bool = False) -> Semigroup[T]:
        """A semigroup from a function; declare ``commutative=True`` only if it is."""
        return FunctionSemigroup(plus, commutative)


class Monoid(Semigroup[T]):
    """A semigroup with an identity: ``plus(zero, x) == x == plus(x, zero)``."""

    @property
    @abstractmethod
    def zero(self) -> T:
        """The identity element."""

    def is_zero(self, value: T) -> bool:
        """Whether ``value`` is the identity (zero and absent are the same in a store)."""
        return value == self.zero

    def sum(self, items: Iterable[T]) -> T:
        """The sum of ``items``; ``zero`` when there are none."""
        total = self.sum_option(items)
        return self.zero if total is None else total

    # a monoid also needs its zero, so its ``of`` takes one more argument than
    # Semigroup's (Algebird's signatures)
    @staticmethod
    def of(  # type: ignore[override]
        zero: T, plus: Callable[[T, T], T], commutative: bool = False
    ) -> Monoid[T]:
        """A monoid from an identity and a function; declare commutativity explicitly."""
        return FunctionMonoid(zero, plus, commutative)


class FunctionSemigroup(Semigroup[T]):
    """``Semigroup.of``: equal to another only when it wraps the very same function."""

    def __init__(self, plus: Callable[[T, T], T], commutative: bool = False) -> None:
        if not callable(plus):
            raise TypeError(f"Semigroup.of needs a callable plus, got {plus!r}")
        self._plus = plus
        self.commutative = bool(commutative)

    def plus(self, left: T, right: T) -> T:
        return self._plus(left, right)

    def _params(self) -> tuple[Any, ...]:
        return (self._plus, self.commutative)


class FunctionMonoid(Monoid[T]):
    """``Monoid.of``."""

    def __init__(self, zero: T, plus: Callable[[T, T], T], commutative: bool = False) -> None:
        if not callable(plus):
            raise TypeError(f"Monoid.of needs a callable plus, got {plus!r}")
        self._zero = zero
        self._plus = plus
        self.commutative = bool(commutative)

    @property
    def zero(self) -> T:
        return self._zero

    def plus(self, left: T, right: T) -> T:
        return self._plus(left, right)

    def _params(self) -> tuple[Any, ...]:
        return (self._zero, self._plus, self.commutative)
