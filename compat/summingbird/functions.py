"""Each node's work on one element, as a small picklable callable with its checks built in.

Every platform needs the same per-element behaviour: a ``map`` whose function returns
``None`` is an error (``None`` is how ``option_map`` drops), a keyed node refuses an
element that is not a (key, value) pair, and an exception from user code says which
node it came from. Writing that once here keeps the memory oracle, the PySpark batch
platform and the streaming planner from drifting apart. The step classes live in this
importable module, so Spark workers and engine processes load them by name and only the
user's own function travels by value.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, Protocol

from .either import Left, Right
from .errors import JobDefinitionError, JobRuntimeError
from .shapes import is_pair, short_repr

Fn = Callable[[Any], Any]


class ElementNode(Protocol):
    """What :func:`compile_step` reads of a job's node (a ``producer.Producer``): its
    operation, its function and how errors name it."""

    @property
    def op(self) -> str: ...

    @property
    def fn(self) -> Callable[..., Any] | None: ...

    def describe(self) -> str: ...


# Functions behind the built-in keyed conveniences: plain module-level functions, so a
# planner can ship them by reference.
def key_of(pair: tuple[Any, Any]) -> Any:
    """``keys()``: the key of a pair."""
    return pair[0]


def value_of(pair: tuple[Any, Any]) -> Any:
    """``values()``: the value of a pair."""
    return pair[1]


def swapped(pair: tuple[Any, Any]) -> tuple[Any, Any]:
    """``swap()``: (value, key)."""
    return (pair[1], pair[0])


def with_unit(x: Any) -> tuple[Any, tuple[()]]:
    """First step of ``lookup``: make the element a key with an empty value."""
    return (x, ())


def joined_value(value_and_joined: tuple[Any, Any]) -> Any:
    """Last step of ``lookup``: keep the service's answer, drop the empty value."""
    return value_and_joined[1]


def left_value(x: Any) -> Any:
    """``lefts()``: the value of a ``Left``, dropping ``Right``s."""
    return x.value if isinstance(x, Left) else None


def right_value(x: Any) -> Any:
    """``rights()``: the value of a ``Right``, dropping ``Left``s."""
    return x.value if isinstance(x, Right) else None


def _note(exc: BaseException, label: str) -> None:
    """Add the node to a user exception without changing its type (callers may catch it)."""
    note = f"in Summingbird node {label}"
    if note not in getattr(exc, "__notes__", ()):
        if sys.version_info >= (3, 11):
            exc.add_note(note)
        else:  # Python 3.10 has no add_note: keep the note where 3.11 would
            # (3.10's BaseException declares no __notes__, the type checker's 3.10 neither)
            exc.__notes__ = [*getattr(exc, "__notes__", ()), note]  # type: ignore[attr-defined]


def require_pair(x: Any, label: str) -> tuple[Any, Any]:
    """``x`` as a (key, value) pair, or an error naming the node that needed one."""
    if is_pair(x):
        return x
    hint = (
        " (a list: keyed operations need a tuple, map(tuple) first)" if isinstance(x, list) else ""
    )
    raise JobRuntimeError(f"{label} needs (key, value) pairs, got {short_repr(x)} "
                          f"({type(x).__name__}){hint}")


def require_summable(x: Any, label: str) -> tuple[Hashable, Any]:
    """A pair whose key can index a store and whose delta is a real value."""
    key, delta = require_pair(x, label)
    try:
        hash(key)
    except TypeError:
        raise JobRuntimeError(f"{label}: key {short_repr(key)} ({type(key).__name__}) is not "
                              f"hashable, so it cannot index a store") from None
    if delta is None:
        raise JobRuntimeError(f"{label}: the value for key {short_repr(key)} is None; "
                              "None is not a legal element value")
    return key, delta


class Step:
    """Base of the element steps: ``step(x)`` returns the node's outputs for ``x``."""

    __slots__ = ("fn", "label")

    def __init__(self, fn: Fn, label: str) -> None:
        self.fn = fn
        self.label = label

    def __call__(self, x: Any) -> tuple[Any, ...] | list[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _none(self, what: str) -> JobRuntimeError:
        return JobRuntimeError(f"{self.label}: the function returned None for {what}; None is "
                               "not a legal element value (use option_map or filter to drop)")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.fn, self.label))


class MapStep(Step):
    __slots__ = ()

    def __call__(self, x: Any) -> tuple[Any, ...]:
        try:
            y = self.fn(x)
        except Exception as exc:
            _note(exc, self.label)
            raise
        if y is None:
            raise self._none(short_repr(x))
        return (y,)


class FilterStep(Step):
    __slots__ = ()

    def __call__(self, x: Any) -> tuple[Any, ...]:
        try:
            keep = self.fn(x)
        except Exception as exc:
            _note(exc, self.label)
            raise
        return (x,) if keep else ()


class OptionMapStep(Step):
    __slots__ = ()

    def __call__(self, x: Any) -> tuple[Any, ...]:
        try:
            y = self.fn(x)
        except Exception as exc:
            _note(exc, self.label)
            raise
        return () if y is None else (y,)


def _expand(fn: Fn, x: Any, label: str) -> list[Any]:
    try:
        out = fn(x)
    except Exception as exc:
        _note(exc, label)
        raise
    try:
        items = list(out)
    except TypeError:
        if not isinstance(out, Iterable):
            raise JobRuntimeError(f"{label}: the function must return an iterable, got "
                                  f"{type(out).__name__} for {short_repr(x)}") from None
        raise
    for y in items:
        if y is None:
            raise JobRuntimeError(f"{label}: the function yielded None for {short_repr(x)}; "
                                  "None is not a legal element value")
    return items


class FlatMapStep(Step):
    __slots__ = ()

    def __call__(self, x: Any) -> list[Any]:
        return _expand(self.fn, x, self.label)


class PairMapStep(Step):
    """Steps of ``keys``/``values``/``swap``/``lookup``: a pair in, one element out."""

    __slots__ = ()

    def __call__(self, x: Any) -> tuple[Any, ...]:
        y = self.fn(require_pair(x, self.label))
        if y is None:
            raise self._none(short_repr(x))
        return (y,)


class FilterKeysStep(Step):
    __slots__ = ()

    def __call__(self, x: Any) -> tuple[Any, ...]:
        key, _ = require_pair(x, self.label)
        try:
            keep = self.fn(key)
        except Exception as exc:
            _note(exc, self.label)
            raise
        return (x,) if keep else ()


class MapValuesStep(Step):
    __slots__ = ()

    def __call__(self, x: Any) -> tuple[Any, ...]:
        key, value = require_pair(x, self.label)
        try:
            y = self.fn(value)
        except Exception as exc:
            _note(exc, self.label)
            raise
        return ((key, y),)


class FilterValuesStep(Step):
    __slots__ = ()

    def __call__(self, x: Any) -> tuple[Any, ...]:
        _, value = require_pair(x, self.label)
        try:
            keep = self.fn(value)
        except Exception as exc:
            _note(exc, self.label)
            raise
        return (x,) if keep else ()


class FlatMapValuesStep(Step):
    __slots__ = ()

    def __call__(self, x: Any) -> list[Any]:
        key, value = require_pair(x, self.label)
        return [(key, y) for y in _expand(self.fn, value, self.label)]


class MapKeysStep(Step):
    __slots__ = ()

    def __call__(self, x: Any) -> tuple[Any, ...]:
        key, value = require_pair(x, self.label)
        try:
            k2 = self.fn(key)
        except Exception as exc:
            _note(exc, self.label)
            raise
        return ((k2, value),)


class FlatMapKeysStep(Step):
    __slots__ = ()

    def __call__(self, x: Any) -> list[Any]:
        key, value = require_pair(x, self.label)
        return [(k2, value) for k2 in _expand(self.fn, key, self.label)]


#: The step class for each operation that expands elements one at a time.
STEPS: dict[str, type[Step]] = {
    "map": MapStep,
    "either": MapStep,
    "filter": FilterStep,
    "option_map": OptionMapStep,
    "lefts": OptionMapStep,
    "rights": OptionMapStep,
    "flat_map": FlatMapStep,
    "keys": PairMapStep,
    "values": PairMapStep,
    "swap": PairMapStep,
    "filter_keys": FilterKeysStep,
    "map_values": MapValuesStep,
    "filter_values": FilterValuesStep,
    "flat_map_values": FlatMapValuesStep,
    "map_keys": MapKeysStep,
    "flat_map_keys": FlatMapKeysStep,
}


def compile_step(node: ElementNode) -> Step:
    """The element function of an expanding node (option-map, flat-map, key/value maps).

    Platforms call this instead of ``node.fn`` so that every one of them applies the
    same checks. A ``None`` element is illegal (it is ``option_map``'s "drop"), but a
    ``None`` inside a pair is an ordinary value: ``left_join`` produces one for a key the
    service does not know.
    """
    op = node.op
    if op == "lookup":  # sugar for map(with_unit) . left_join . map_values(joined_value)
        op = "map" if node.fn is with_unit else "map_values"
    step = STEPS.get(op)
    if step is None or node.fn is None:
        raise JobDefinitionError(f"{node.describe()} does not expand elements one by one")
    return step(node.fn, node.describe())


def join_partition(service: Any, label: str, items: Iterable[Any],
                   chunk: int = 512) -> Iterator[Any]:
    """``left_join`` over many elements, asking the service for a chunk of keys at a time.

    ``items`` are ``(order, (key, value))``; the order token passes through untouched.
    Batching the lookups is what Summingbird's online ``FlatMapOperation.combine`` does:
    one ``multi_get`` per group rather than one ``get`` per element.
    """
    multi_get = getattr(service, "multi_get", None)
    buffer: list[tuple[Any, Any, Any]] = []

    def flush() -> Iterator[Any]:
        keys = [key for _, key, _ in buffer]
        if multi_get is not None:
            found = multi_get(keys)
            answers = [found.get(key) for key in keys]
        else:
            answers = [service.get(key) for key in keys]
        for (order, key, value), joined in zip(buffer, answers):
            yield (order, (key, (value, joined)))
        buffer.clear()

    for order, x in items:
        key, value = require_pair(x, label)
        buffer.append((order, key, value))
        if len(buffer) >= chunk:
            yield from flush()
    if buffer:
        yield from flush()
