"""``Left``/``Right``: the two sides of ``either``.

Summingbird's ``either`` merges two streams of different types into a stream of
Scala ``Either`` values; Python has no such type, so these two small immutable records
play the part. They are importable by name, so they pickle to Spark workers and to the
streaming engine's processes without shipping code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Left(Generic[T]):
    """An element that came from the left side of ``either``."""

    value: T


@dataclass(frozen=True, slots=True)
class Right(Generic[T]):
    """An element that came from the right side of ``either``."""

    value: T
