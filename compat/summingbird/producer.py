"""The Producer algebra: a job as an immutable graph of nodes (Summingbird's ``Producer``).

Every method returns a new node that points at its parents; nothing runs until a
platform plans and runs a *tail* (a ``sum_by_key``, a ``write``, or an ``also`` ending in
one). The graph is deliberately plain so a planner can walk it: each node has an ``id``,
a ``kind`` (Summingbird's node class), the user-facing ``op`` that built it, its
``parents``, its function and its payload (source, store and semigroup, service, sink,
or name). Platform code never lives here.

Keyed methods exist on every producer (Python has no implicit conversions to a keyed
type); a keyed method on a stream known not to be pairs fails where it is written, and
unknown streams are checked per element when the job runs.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from . import shapes
from .either import Left, Right
from .errors import JobDefinitionError
from .functions import (
    joined_value,
    key_of,
    left_value,
    right_value,
    swapped,
    value_of,
    with_unit,
)
from .locations import call_site
from .shapes import Shape
from .sources import Source, as_source

DEFAULT_NAME = "DEFAULT"


class NodeKind(str, enum.Enum):
    """Summingbird's node classes (``OptionMappedProducer`` is ``OPTION_MAP``, ...)."""

    SOURCE = "source"
    OPTION_MAP = "option_map"
    FLAT_MAP = "flat_map"
    VALUE_FLAT_MAP = "value_flat_map"
    KEY_FLAT_MAP = "key_flat_map"
    LEFT_JOIN = "left_join"
    SUMMER = "summer"
    WRITE = "write"
    MERGE = "merge"
    NAMED = "named"
    ALSO = "also"


#: Kinds whose element work is a ``functions.compile_step`` step.
EXPANDING_KINDS = frozenset({NodeKind.OPTION_MAP, NodeKind.FLAT_MAP,
                             NodeKind.VALUE_FLAT_MAP, NodeKind.KEY_FLAT_MAP})
#: Summingbird's ``isNoOp``: nodes that only route or label.
NO_OP_KINDS = frozenset({NodeKind.NAMED, NodeKind.MERGE, NodeKind.ALSO})

_ids = itertools.count(1)


def _callable(fn: object, op: str) -> Callable[..., Any]:
    if not callable(fn):
        raise JobDefinitionError(f"{op}() at {call_site()} needs a function, got "
                                 f"{shapes.short_repr(fn)} ({type(fn).__name__})")
    return fn


@dataclass(frozen=True, eq=False, repr=False)
class Producer:
    """One node of a job's graph; equality and hashing are by identity, as in Memory."""

    kind: NodeKind
    op: str
    parents: tuple[Producer, ...] = ()
    fn: Callable[..., Any] | None = None
    source: Source | None = None
    store: Any = None
    semigroup: Any = None
    service: Any = None
    sink: Any = None
    given_name: str | None = None
    call_site: str = ""
    shape: Shape = shapes.UNKNOWN
    id: int = field(default_factory=lambda: next(_ids))

    # -- structure --------------------------------------------------------------------
    @property
    def is_tail(self) -> bool:
        """Whether this node can be planned (Summingbird's ``TailProducer``)."""
        if self.kind in (NodeKind.SUMMER, NodeKind.WRITE):
            return True
        if self.kind is NodeKind.NAMED:
            return self.parents[0].is_tail
        if self.kind is NodeKind.ALSO:
            return self.parents[1].is_tail
        return False

    @property
    def data_parents(self) -> tuple[Producer, ...]:
        """Parents whose elements flow into this node (``also`` only ensures its first)."""
        return self.parents[1:] if self.kind is NodeKind.ALSO else self.parents

    def describe(self) -> str:
        """How errors name this node: operation, id and where it was written."""
        what = f"name({self.given_name!r})" if self.kind is NodeKind.NAMED else self.op
        return f"'{what}' (node {self.id}, {self.call_site})"

    def __repr__(self) -> str:
        return f"<Producer {self.describe()}>"

    def _child(
        self,
        kind: NodeKind,
        op: str,
        shape: Shape,
        parents: tuple[Producer, ...] | None = None,
        **payload: Any,
    ) -> Producer:
        return Producer(kind=kind, op=op, parents=(self,) if parents is None else parents,
                        call_site=call_site(), shape=shape, **payload)

    def _require_pairs(self, op: str) -> None:
        if self.shape.known_not_pairs:
            raise JobDefinitionError(
                f"{op}() at {call_site()} needs a stream of (key, value) pairs, but its input "
                f"{self.describe()} yields {self.shape.reason}; map each element to a "
                "(key, value) tuple first")

    # -- every producer ---------------------------------------------------------------
    def map(self, fn: Callable[[Any], Any]) -> Producer:
        """One output per element (``None`` is not a legal output: use ``option_map``)."""
        return self._child(NodeKind.OPTION_MAP, "map", shapes.of_map(_callable(fn, "map")), fn=fn)

    def filter(self, predicate: Callable[[Any], bool]) -> Producer:
        """Keep the elements for which ``predicate`` is true."""
        return self._child(NodeKind.OPTION_MAP, "filter", self.shape,
                           fn=_callable(predicate, "filter"))

    def option_map(self, fn: Callable[[Any], Any]) -> Producer:
        """Zero or one output per element: return ``None`` to drop it.

        Prefer this to ``flat_map`` for 0/1 outputs: planners may fuse it into a source.
        """
        return self._child(NodeKind.OPTION_MAP, "option_map",
                           shapes.of_option_map(_callable(fn, "option_map")), fn=fn)

    def flat_map(self, fn: Callable[[Any], Iterable[Any]]) -> Producer:
        """Any number of outputs per element."""
        return self._child(NodeKind.FLAT_MAP, "flat_map",
                           shapes.of_flat_map(_callable(fn, "flat_map")), fn=fn)

    def merge(self, other: Producer) -> Producer:
        """The union of two streams (no order between them is promised)."""
        if not isinstance(other, Producer):
            raise JobDefinitionError(f"merge() at {call_site()} needs a Producer, got "
                                     f"{type(other).__name__}")
        return self._child(NodeKind.MERGE, "merge", shapes.merged(self.shape, other.shape),
                           parents=(self, other))

    def __add__(self, other: Producer) -> Producer:
        """``a + b`` is ``a.merge(b)`` (Summingbird's ``++``)."""
        if not isinstance(other, Producer):
            return NotImplemented
        return self.merge(other)

    def name(self, name: str) -> Producer:
        """Label this point of the graph; options given to ``name`` apply to every node
        upstream of it (nearest name wins). A tail stays a tail."""
        if not isinstance(name, str) or not name:
            raise JobDefinitionError(
                f"name() at {call_site()} needs a non-empty string, got {name!r}"
            )
        if name == DEFAULT_NAME:
            raise JobDefinitionError(f"name() at {call_site()}: {DEFAULT_NAME!r} is reserved "
                                     "for options that apply to every node")
        return self._child(NodeKind.NAMED, "name", self.shape, given_name=name)

    def write(self, sink: Callable[[Any], Any]) -> Producer:
        """Send every element to ``sink`` (a callable) and pass it on; returns a tail."""
        if not callable(sink):
            raise JobDefinitionError(f"write() at {call_site()} needs a sink (a callable taking "
                                     f"one element), got {type(sink).__name__}")
        return self._child(NodeKind.WRITE, "write", self.shape, sink=sink)

    def also(self, that: Producer) -> Producer:
        """Plan this tail too, but continue with ``that`` (Summingbird's ``also``)."""
        if not self.is_tail:
            raise JobDefinitionError(
                f"also() at {call_site()} must be called on a tail (a sum_by_key, a write, or an "
                f"also of them), so that its side of the job has an output; {self.describe()} "
                "is not one")
        if not isinstance(that, Producer):
            raise JobDefinitionError(f"also() at {call_site()} needs a Producer, got "
                                     f"{type(that).__name__}")
        return self._child(NodeKind.ALSO, "also", that.shape, parents=(self, that))

    def lookup(self, service: Any) -> Producer:
        """``(element, service.get(element) or None)`` for every element."""
        _service(service, "lookup")
        paired = self._child(NodeKind.OPTION_MAP, "lookup", shapes.PAIRS, fn=with_unit)
        joined = paired._child(NodeKind.LEFT_JOIN, "lookup", shapes.PAIRS, service=service)
        return joined._child(NodeKind.VALUE_FLAT_MAP, "lookup", shapes.PAIRS, fn=joined_value)

    def either(self, other: Producer) -> Producer:
        """Merge two streams of different types: ``Left(x)`` from this one, ``Right(y)``
        from ``other``."""
        if not isinstance(other, Producer):
            raise JobDefinitionError(f"either() at {call_site()} needs a Producer, got "
                                     f"{type(other).__name__}")
        shape = Shape(shapes.ShapeKind.NOT_PAIRS, "Left/Right values of either()")
        left = self._child(NodeKind.OPTION_MAP, "either", shape, fn=Left)
        right = other._child(NodeKind.OPTION_MAP, "either", shape, fn=Right)
        return left._child(NodeKind.MERGE, "either", shape, parents=(left, right))

    def lefts(self) -> Producer:
        """The values of the ``Left`` elements (an extra: Summingbird has only ``either``)."""
        return self._child(NodeKind.OPTION_MAP, "lefts", shapes.UNKNOWN, fn=left_value)

    def rights(self) -> Producer:
        """The values of the ``Right`` elements."""
        return self._child(NodeKind.OPTION_MAP, "rights", shapes.UNKNOWN, fn=right_value)

    # -- keyed: elements are (key, value) pairs ----------------------------------------
    def _keyed(self, kind: NodeKind, op: str, fn: Any, shape: Shape = shapes.PAIRS) -> Producer:
        self._require_pairs(op)
        return self._child(kind, op, shape, fn=_callable(fn, op))

    def map_values(self, fn: Callable[[Any], Any]) -> Producer:
        """``(k, fn(v))``: values change, keys do not (no re-partitioning needed)."""
        return self._keyed(NodeKind.VALUE_FLAT_MAP, "map_values", fn)

    def flat_map_values(self, fn: Callable[[Any], Iterable[Any]]) -> Producer:
        """``(k, w)`` for every ``w`` in ``fn(v)``."""
        return self._keyed(NodeKind.VALUE_FLAT_MAP, "flat_map_values", fn)

    def filter_values(self, predicate: Callable[[Any], bool]) -> Producer:
        """Keep the pairs whose value satisfies ``predicate``."""
        return self._keyed(NodeKind.VALUE_FLAT_MAP, "filter_values", predicate)

    def map_keys(self, fn: Callable[[Any], Hashable]) -> Producer:
        """``(fn(k), v)``."""
        return self._keyed(NodeKind.KEY_FLAT_MAP, "map_keys", fn)

    def flat_map_keys(self, fn: Callable[[Any], Iterable[Hashable]]) -> Producer:
        """``(k2, v)`` for every ``k2`` in ``fn(k)``."""
        return self._keyed(NodeKind.KEY_FLAT_MAP, "flat_map_keys", fn)

    def filter_keys(self, predicate: Callable[[Any], bool]) -> Producer:
        """Keep the pairs whose key satisfies ``predicate``."""
        return self._keyed(NodeKind.OPTION_MAP, "filter_keys", predicate)

    def keys(self) -> Producer:
        """The keys."""
        return self._keyed(NodeKind.OPTION_MAP, "keys", key_of, shapes.UNKNOWN)

    def values(self) -> Producer:
        """The values."""
        return self._keyed(NodeKind.OPTION_MAP, "values", value_of, shapes.UNKNOWN)

    def swap(self) -> Producer:
        """``(v, k)``."""
        return self._keyed(NodeKind.OPTION_MAP, "swap", swapped)

    def left_join(self, service: Any) -> Producer:
        """``(k, (v, service.get(k) or None))``: where remote lookups happen."""
        self._require_pairs("left_join")
        _service(service, "left_join")
        return self._child(NodeKind.LEFT_JOIN, "left_join", shapes.PAIRS, service=service)

    def sum_by_key(self, store: Any, semigroup: Any) -> Producer:
        """Merge each value into ``store`` under its key with ``semigroup``; a tail.

        Emits ``(k, (previous or None, delta))``: the store's value just before the merge
        and the delta merged (one input on the memory platform, the sum of a batch on
        the batch platform), so summers chain.
        """
        self._require_pairs("sum_by_key")
        where = call_site()
        if not callable(getattr(store, "merge", None)):
            hint = (" (a plain dict: use InMemoryStore(initial=your_dict))"
                    if isinstance(store, dict) else "")
            raise JobDefinitionError(
                f"sum_by_key() at {where}: the store {shapes.short_repr(store)} "
                f"({type(store).__name__}) has no merge(key, delta) method{hint}; use "
                "InMemoryStore, SQLiteStore or any object whose merge returns the value "
                "just before the merge")
        if not callable(getattr(semigroup, "plus", None)):
            raise JobDefinitionError(
                f"sum_by_key() at {where}: {shapes.short_repr(semigroup)} is not a semigroup "
                "(no plus(a, b)); use one from compat.summingbird.monoids or Semigroup.of(fn)")
        bind = getattr(store, "bind_semigroup", None)
        if callable(bind):
            bind(semigroup, where)
        return self._child(NodeKind.SUMMER, "sum_by_key", shapes.PAIRS, store=store,
                           semigroup=semigroup)


def _service(service: Any, op: str) -> None:
    if not callable(getattr(service, "get", None)):
        raise JobDefinitionError(f"{op}() at {call_site()} needs a service with get(key), got "
                                 f"{shapes.short_repr(service)} ({type(service).__name__})")


def source(spec: Any) -> Producer:
    """A graph root: a ``Source`` (e.g. ``JsonLinesSource``) or any re-readable iterable."""
    src = as_source(spec)
    return Producer(kind=NodeKind.SOURCE, op="source", source=src, call_site=call_site(),
                    shape=src.shape())
