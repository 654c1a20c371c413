"""What we know, before running, about whether a stream's elements are (key, value) pairs.

Summingbird's Scala types make ``sumByKey`` on a stream of strings a compile error.
Python has no such check, so the graph carries a small "shape" per node: known to be
pairs, known not to be, or unknown. Shapes come from data we can see without running
anything (the elements of an in-memory source) and from return annotations on user
functions; everything else is unknown and is checked per element at run time. A keyed
operation on a stream known not to be pairs is refused where it is written.
"""

from __future__ import annotations

import collections.abc
import enum
import inspect
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeGuard

from .locations import describe_callable


class ShapeKind(enum.Enum):
    PAIRS = "pairs"
    NOT_PAIRS = "not pairs"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Shape:
    """A stream's known shape and the evidence for it (quoted in error messages)."""

    kind: ShapeKind
    reason: str = ""

    @property
    def known_not_pairs(self) -> bool:
        return self.kind is ShapeKind.NOT_PAIRS


UNKNOWN = Shape(ShapeKind.UNKNOWN)
PAIRS = Shape(ShapeKind.PAIRS)


def is_pair(x: object) -> TypeGuard[tuple[Any, Any]]:
    """The one definition of a keyed element: a tuple (or namedtuple) of length 2."""
    return isinstance(x, tuple) and len(x) == 2


def short_repr(x: Any, limit: int = 60) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def of_elements(items: Iterable[Any]) -> Shape:
    """Pairs if every element is a pair, not pairs if none is, unknown when mixed/empty."""
    pairs = others = 0
    example = None
    for x in items:
        if is_pair(x):
            pairs += 1
        else:
            others += 1
            if example is None:
                example = x
        if pairs and others:
            return UNKNOWN
    if pairs:
        return PAIRS
    if others:
        return Shape(ShapeKind.NOT_PAIRS,
                     f"elements such as {short_repr(example)} ({type(example).__name__})")
    return UNKNOWN


def merged(left: Shape, right: Shape) -> Shape:
    """Both sides must agree for the union to have a known shape."""
    if left.kind is right.kind:
        return left
    return UNKNOWN


def _of_type(tp: Any) -> ShapeKind:
    """Shape of values of annotated type ``tp`` (conservative: unknown when unsure)."""
    if tp is Any or tp is object or isinstance(tp, typing.TypeVar):
        return ShapeKind.UNKNOWN
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        kinds = {_of_type(arg) for arg in typing.get_args(tp) if arg is not type(None)}
        return kinds.pop() if len(kinds) == 1 else ShapeKind.UNKNOWN
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is not Ellipsis:
            return ShapeKind.PAIRS
        if len(args) == 2:  # tuple[X, ...]: any length
            return ShapeKind.UNKNOWN
        return ShapeKind.NOT_PAIRS
    if origin is not None:
        return ShapeKind.NOT_PAIRS if isinstance(origin, type) else ShapeKind.UNKNOWN
    if isinstance(tp, type):
        if issubclass(tp, tuple):
            fields = getattr(tp, "_fields", None)
            if fields is None:
                return ShapeKind.UNKNOWN
            return ShapeKind.PAIRS if len(fields) == 2 else ShapeKind.NOT_PAIRS
        return ShapeKind.NOT_PAIRS
    return ShapeKind.UNKNOWN


_ITERABLE_ORIGINS = (collections.abc.Iterable, collections.abc.Iterator, collections.abc.Generator,
                     collections.abc.Sequence, collections.abc.Collection, list, set, frozenset)


def _return_annotation(fn: Callable[..., Any]) -> Any:
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        return inspect.Signature.empty
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - unresolvable annotations: we simply know nothing
        return inspect.Signature.empty
    return hints.get("return", inspect.Signature.empty)


def _annotated(fn: Callable[..., Any], kind: ShapeKind, tp: Any, verb: str = "return") -> Shape:
    if kind is ShapeKind.UNKNOWN:
        return UNKNOWN
    name = getattr(tp, "__name__", None) or repr(tp)
    return Shape(kind, f"{name} values ({describe_callable(fn)} is annotated to {verb} {name})")


def of_map(fn: Callable[..., Any]) -> Shape:
    """Shape of ``map(fn)`` from ``fn``'s return annotation."""
    tp = _return_annotation(fn)
    if tp is inspect.Signature.empty:
        return UNKNOWN
    return _annotated(fn, _of_type(tp), tp)


def of_option_map(fn: Callable[..., Any]) -> Shape:
    """``Optional[X]`` returns give ``X``'s shape (``None`` only drops the element)."""
    return of_map(fn)


def of_flat_map(fn: Callable[..., Any]) -> Shape:
    """``Iterable[X]`` (or list/Iterator/Generator of X) returns give ``X``'s shape."""
    tp = _return_annotation(fn)
    if tp is inspect.Signature.empty:
        return UNKNOWN
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if (
        origin is tuple
        and len(args) == 2
        and args[1] is Ellipsis
        or origin in _ITERABLE_ORIGINS
        and args
    ):
        element = args[0]
    else:
        return UNKNOWN
    return _annotated(fn, _of_type(element), element, verb="yield")
