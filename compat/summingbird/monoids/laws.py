"""The algebraic laws a value type must obey for ``sum_by_key`` to be platform-independent.

These are Algebird's ``BaseProperties`` (associativity, ``sumOption`` equals the fold,
identity, commutativity where claimed) as plain functions over given values, so a test
can drive them with hypothesis and a user can check a custom monoid the same way.
Each raises ``AssertionError`` with the offending values; ``eq`` lets floating-point
monoids compare with a tolerance.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from .base import Monoid, Semigroup

Eq = Callable[[Any, Any], bool]


def check_associative(sg: Semigroup[Any], a: Any, b: Any, c: Any, eq: Eq = operator.eq) -> None:
    left = sg.plus(sg.plus(a, b), c)
    right = sg.plus(a, sg.plus(b, c))
    assert eq(left, right), f"{sg!r} is not associative: (a+b)+c={left!r} but a+(b+c)={right!r}"


def check_sum_option(sg: Semigroup[Any], items: Sequence[Any], eq: Eq = operator.eq) -> None:
    total = sg.sum_option(list(items))
    if not items:
        assert total is None, f"{sg!r}.sum_option([]) should be None, got {total!r}"
        return
    fold = functools.reduce(sg.plus, items)
    assert eq(total, fold), f"{sg!r}.sum_option={total!r} differs from the fold {fold!r}"


def check_identity(m: Monoid[Any], a: Any, eq: Eq = operator.eq) -> None:
    assert m.is_zero(m.zero), f"{m!r}.is_zero(zero) is False"
    assert eq(m.plus(m.zero, a), a), f"{m!r}: zero + a != a for a={a!r}"
    assert eq(m.plus(a, m.zero), a), f"{m!r}: a + zero != a for a={a!r}"


def check_commutative(sg: Semigroup[Any], a: Any, b: Any, eq: Eq = operator.eq) -> None:
    assert eq(sg.plus(a, b), sg.plus(b, a)), (
        f"{sg!r} declares commutative=True but a+b={sg.plus(a, b)!r} and b+a={sg.plus(b, a)!r}")


def check_laws(sg: Semigroup[Any], a: Any, b: Any, c: Any, eq: Eq = operator.eq) -> None:
    """Every law that applies to ``sg`` on the values ``a``, ``b``, ``c``."""
    check_associative(sg, a, b, c, eq)
    check_sum_option(sg, [a, b, c], eq)
    check_sum_option(sg, [], eq)
    if isinstance(sg, Monoid):
        check_identity(sg, a, eq)
    if sg.commutative:
        check_commutative(sg, a, b, eq)
