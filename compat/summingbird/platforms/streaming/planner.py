"""The online planner: a job's graph becomes spout and bolt nodes (Summingbird's ``OnlinePlan``).

Producers are grouped into three kinds of node, walking up from the tail and deciding for
every dependency whether it joins the current node or starts a new one. A new node
starts when (reference, section 2.2.1):

1. the dependency has several consumers (a fork is never pulled into one of them);
2. the current node is a summer and the dependency is not a no-op (a summer node holds
   the ``sum_by_key`` and names/merges/alsos only);
3. the current node has real logic and the dependency is a summer (nothing after a
   summer shares its node);
4. the current node feeds a summer and everything above the dependency could run in a
   spout: a dedicated flat-map bolt is kept before every summer, as Summingbird does for
   map-side work (no ``FMMergeableWithSource`` here);
5. the current producer cannot run in a spout but everything above it can (a spout
   runs its source and the option-maps right after it, never flat-maps, joins or writes).

The inputs of a merge always start nodes of their own (chains of merges collapse into
one node), so a bolt subscribes to every node that feeds one of its merges. Edges into a
summer are fields-grouped on the element's key, encoded canonically (the SQLite store's
typed JSON), so the engines' deterministic fields hash picks the summer task: equal keys
reach the same task in every process, which Python's ``hash()`` would not guarantee.
Every other edge is shuffled.

Planning is deterministic (node names and ordinals come from the graph's topological
order, never from producer ids), because every heron instance re-plans the job when it
imports the topology module and the Topology Master checks that the plans agree.

Every element carries a *lineage*: ``(source ordinal, element index)``, extended by the
output position at each flat-map-like node and by a code at each merge side it crosses.
Distinct elements of one run have distinct lineages and a replayed element has the same
one, which is what makes the summers' merges replay-safe (see ``ledger.py``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ...errors import PlanningError
from ...functions import Step, compile_step
from ...graph import JobGraph
from ...options import (
    CacheSize,
    FlatMapParallelism,
    FlushFrequency,
    Option,
    OptionsLike,
    SourceParallelism,
    SummerParallelism,
    resolve,
)
from ...planning import ValidatedJob, validate
from ...producer import DEFAULT_NAME, EXPANDING_KINDS, NO_OP_KINDS, NodeKind, Producer
from ...sources import JsonLinesSource, Source
from ...stores import InMemoryStore

SPOUT = "spout"
FLAT_MAP = "flat_map"
SUMMER = "summer"

#: Defaults for a laptop, not a cluster (Summingbird's are 1 / 5 / 5 for Storm clusters):
#: every task of the heron engine is an OS process.
DEFAULT_SOURCE_PARALLELISM = 1
DEFAULT_FLAT_MAP_PARALLELISM = 1
DEFAULT_SUMMER_PARALLELISM = 1
#: Summingbird flushes caches every 10 s; a bounded run ends only after the last flush,
#: so locally a second is the better default.
DEFAULT_FLUSH_SECONDS = 1.0

#: Producers a spout may run (Summingbird's "mergeable with source").
_SOURCE_MERGEABLE = frozenset({NodeKind.SOURCE, NodeKind.NAMED, NodeKind.OPTION_MAP, NodeKind.ALSO})
#: Nodes whose outputs get a position in the lineage (they may expand one element to many).
_POSITIONAL = frozenset({NodeKind.FLAT_MAP, NodeKind.VALUE_FLAT_MAP, NodeKind.KEY_FLAT_MAP})

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class AllowNonCommutative(Option):
    """Opt a summer into a non-commutative semigroup online.

    Online, one key's values reach its summer from several upstream tasks, through caches
    flushed at arbitrary times and through replays, in no fixed order; a non-commutative
    ``plus`` (``First``, ``Last``, string concatenation) then gives a result that depends
    on timing. Give this option only when that is acceptable.
    """


# -- what a node runs, per element -----------------------------------------------------------

@dataclass(frozen=True)
class StepOp:
    """An option-map or flat-map-like node: ``functions.compile_step`` with its checks."""

    step: Step
    #: flat-map-like nodes append each output's position to the lineage
    positional: bool


@dataclass(frozen=True)
class JoinOp:
    """``left_join``: ``(k, v)`` becomes ``(k, (v, service.get(k)))``."""

    service: Any
    label: str


@dataclass(frozen=True)
class WriteOp:
    """``write``: the element goes to the sink and on downstream."""

    sink: Any
    label: str
    #: a stable name for the sink (``w<topological index>``), for spool files
    sink_id: str


Op = StepOp | JoinOp | WriteOp


@dataclass(frozen=True)
class SummerSpec:
    """What a summer bolt merges into and how it caches."""

    store: Any
    semigroup: Any
    label: str
    #: keys held before a size flush (0: merge after every input)
    cache_size: int
    cache_fuzz: float
    #: seconds between time flushes (tick tuples), when caching
    flush_seconds: float


@dataclass(frozen=True)
class Edge:
    """A subscription of a node to an upstream node's stream.

    ``codes`` holds one tuple of merge codes per path from the upstream node's output
    into this node (two for ``x + x``): an input is processed once per path, each time
    with those codes appended to its lineage.
    """

    source: str
    codes: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class PlannedNode:
    """One spout or bolt of the topology, with everything its tasks run."""

    name: str
    role: str
    #: how errors and listings name the producers in this node, top-down
    members: tuple[str, ...]
    parallelism: int
    inputs: tuple[Edge, ...] = ()
    consumers: tuple[str, ...] = ()
    #: some consumer is a summer: emitted elements must be (key, value) pairs with a key
    keyed_output: bool = False
    #: the summer named when an element cannot be keyed
    key_label: str = ""
    ops: tuple[Op, ...] = ()
    source: Source | None = None
    source_ordinal: int = -1
    source_label: str = ""
    summer: SummerSpec | None = None
    #: the job's tail is this node's output (collected by ``run_streaming``)
    is_tail: bool = False
    #: the component's own Storm config (tick tuples for summer caches)
    config: Mapping[str, Any] = field(default_factory=dict)

    def codes_from(self, component: str) -> tuple[tuple[int, ...], ...]:
        for edge in self.inputs:
            if edge.source == component:
                return edge.codes
        return ((),)

    @property
    def emits(self) -> bool:
        """Whether tasks of this node need to emit at all (someone consumes the stream)."""
        return bool(self.consumers)


@dataclass(frozen=True)
class StreamingPlan:
    """A job planned as a topology: nodes in topological order plus topology config."""

    name: str
    nodes: tuple[PlannedNode, ...]
    config: Mapping[str, Any]
    #: modules whose code must travel by value to processes that cannot import them
    modules_by_value: frozenset[str] = frozenset()

    def node(self, name: str) -> PlannedNode:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"no component {name!r} in the plan of {self.name!r}")

    @property
    def tail(self) -> PlannedNode:
        return next(n for n in self.nodes if n.is_tail)

    def describe(self) -> str:
        """One line per component: role, parallelism, inputs with groupings, members."""
        lines = []
        for node in self.nodes:
            ins = ", ".join(f"{e.source} ({'fields key' if node.role == SUMMER else 'shuffle'})"
                            for e in node.inputs)
            lines.append(f"{node.name} [{node.role} x{node.parallelism}]"
                         f"{' <- ' + ins if ins else ''}: {'; '.join(node.members)}")
        return "\n".join(lines)

    def replace_io(self, stores: Mapping[int, Any], sinks: Mapping[str, Any]) -> StreamingPlan:
        """The same plan with stores (by ``id``) and sinks (by sink id) swapped.

        ``run_streaming`` uses it to put SQLite files behind in-memory stores and spool
        files behind sinks, without planning again.
        """
        nodes = []
        for node in self.nodes:
            summer = node.summer
            if summer is not None and id(summer.store) in stores:
                summer = replace(summer, store=stores[id(summer.store)])
            ops = tuple(replace(op, sink=sinks[op.sink_id])
                        if isinstance(op, WriteOp) and op.sink_id in sinks else op
                        for op in node.ops)
            nodes.append(replace(node, summer=summer, ops=ops))
        return replace(self, nodes=tuple(nodes))


# -- the walk ------------------------------------------------------------------------------

@dataclass(eq=False)
class _Draft:
    """A node being built: members in the order they were added (tail side first)."""

    members: list[Producer] = field(default_factory=list)
    role: str = FLAT_MAP
    feeds_summer: bool = False

    @property
    def has_logic(self) -> bool:
        return any(m.kind not in NO_OP_KINDS for m in self.members)


class _Walk:
    def __init__(self, graph: JobGraph) -> None:
        self.graph = graph
        self.drafts: list[_Draft] = []
        self.node_of: dict[int, _Draft] = {}
        self._mergeable: dict[int, bool] = {}

    def all_source_mergeable(self, node: Producer) -> bool:
        """``node`` and everything above it could run in a spout."""
        known = self._mergeable.get(node.id)
        if known is None:
            known = node.kind in _SOURCE_MERGEABLE and all(
                self.all_source_mergeable(p) for p in node.data_parents)
            self._mergeable[node.id] = known
        return known

    def new_draft(self, after: _Draft | None = None) -> _Draft:
        draft = _Draft(feeds_summer=after is not None and after.role == SUMMER)
        self.drafts.append(draft)
        return draft

    def splits(self, producer: Producer, dep: Producer, draft: _Draft) -> bool:
        if self.graph.fan_out(dep) > 1:                                           # rule 1
            return True
        if draft.role == SUMMER and dep.kind not in NO_OP_KINDS:                  # rule 2
            return True
        if draft.has_logic and dep.kind is NodeKind.SUMMER:                       # rule 3
            return True
        if (draft.role == FLAT_MAP and draft.feeds_summer and draft.has_logic
                and self.all_source_mergeable(dep)):                              # rule 4
            return True
        return (producer.kind not in _SOURCE_MERGEABLE                           # rule 5
                and self.all_source_mergeable(dep))

    def plan(self, tail: Producer) -> None:
        # An explicit stack rather than recursion: long chains must not hit the limit.
        stack: list[tuple[Producer, _Draft]] = [(tail, self.new_draft())]
        while stack:
            producer, draft = stack.pop()
            if producer.id in self.node_of:
                continue
            self.node_of[producer.id] = draft
            draft.members.append(producer)
            if producer.kind is NodeKind.SUMMER:
                draft.role = SUMMER
            elif producer.kind is NodeKind.SOURCE:
                draft.role = SPOUT
            if producer.kind is NodeKind.ALSO:
                ensure, result = producer.parents
                if ensure.id not in self.node_of:
                    stack.append((ensure, self.new_draft()))
                self._follow(stack, producer, result, draft)
            elif producer.kind is NodeKind.MERGE:
                for parent in producer.parents:
                    if parent.id in self.node_of:
                        continue
                    if parent.kind is NodeKind.MERGE and self.graph.fan_out(parent) == 1:
                        stack.append((parent, draft))  # merge chains collapse into one node
                    else:
                        stack.append((parent, self.new_draft(after=draft)))
            else:
                for parent in producer.parents:
                    self._follow(stack, producer, parent, draft)

    def _follow(self, stack: list[tuple[Producer, _Draft]], producer: Producer, dep: Producer,
                draft: _Draft) -> None:
        if dep.id in self.node_of:
            return
        if self.splits(producer, dep, draft):
            stack.append((dep, self.new_draft(after=draft)))
        else:
            stack.append((dep, draft))


# -- from drafts to planned nodes ---------------------------------------------------------

def _merge_code(ordinal: int, side: int) -> int:
    """A merge side's lineage code: negative (positions are not), unique per merge side."""
    return -(2 * ordinal + side + 1)


def _safe(name: str) -> str:
    return _UNSAFE_NAME.sub("_", name).strip("_") or "node"


def _absolute(source: Source | None) -> Source | None:
    """JSON-lines paths made absolute here: heron instances run in another directory."""
    if isinstance(source, JsonLinesSource) and not os.path.isabs(source.path):
        return JsonLinesSource(os.path.abspath(source.path), source.arrays_as_tuples)
    return source


def _option_label(graph: JobGraph, node: Producer) -> str:
    names = graph.names_of(node)
    return names[0] if names else DEFAULT_NAME


class _Builder:
    def __init__(self, job: ValidatedJob, *, allow_in_memory_stores: bool,
                 message_timeout: float) -> None:
        self.job = job
        self.job_timeout = message_timeout
        self.graph = job.graph
        self.order = {n.id: i for i, n in enumerate(self.graph.nodes)}
        self.allow_in_memory_stores = allow_in_memory_stores

    def build(self, name: str, config: Mapping[str, Any]) -> StreamingPlan:
        walk = _Walk(self.graph)
        walk.plan(self.graph.tail)
        drafts = [d for d in walk.drafts if d.members]
        for draft in drafts:
            draft.members.sort(key=lambda m: self.order[m.id])  # top-down
            self._check(draft)
        # Topological order of nodes: by the position of each node's output producer.
        drafts.sort(key=lambda d: self.order[d.members[-1].id])
        names = {id(d): self._name(i, d) for i, d in enumerate(drafts)}
        node_of = {pid: names[id(d)] for pid, d in walk.node_of.items()}
        inputs = {id(d): self._edges(d, walk.node_of, node_of) for d in drafts}
        consumers: dict[str, list[str]] = {names[id(d)]: [] for d in drafts}
        for draft in drafts:
            for edge in inputs[id(draft)]:
                consumers[edge.source].append(names[id(draft)])
        roles = {names[id(d)]: d.role for d in drafts}
        tail_node = node_of[self.graph.tail.id]
        nodes = []
        for draft in drafts:
            node_name = names[id(draft)]
            summers = [c for c in consumers[node_name] if roles[c] == SUMMER]
            key_label = ""
            if summers:
                summer_draft = next(d for d in drafts if names[id(d)] == summers[0])
                key_label = next(m for m in summer_draft.members
                                 if m.kind is NodeKind.SUMMER).describe()
            nodes.append(self._node(draft, node_name, inputs[id(draft)],
                                    tuple(consumers[node_name]), key_label,
                                    node_name == tail_node))
        return StreamingPlan(name, tuple(nodes), dict(config), self.job.modules_by_value)

    # -- checks ------------------------------------------------------------------------
    def _check(self, draft: _Draft) -> None:
        if draft.role == SPOUT:
            for member in draft.members:
                if member.kind not in _SOURCE_MERGEABLE:  # pragma: no cover - planner invariant
                    raise PlanningError(f"internal planning error: {member.describe()} was put "
                                        "in a spout")
        if draft.role == SUMMER:
            summer = next(m for m in draft.members if m.kind is NodeKind.SUMMER)
            self._check_summer(summer)

    def _check_summer(self, summer: Producer) -> None:
        semigroup = summer.semigroup
        if not getattr(semigroup, "commutative", False) and resolve(
                self.graph, summer, AllowNonCommutative, self.job.options) is None:
            label = _option_label(self.graph, summer)
            raise PlanningError(
                f"{summer.describe()} sums with {semigroup!r}, which is not commutative. "
                "Online, one key's values reach its summer from several tasks, through caches "
                "and replays, in no fixed order, so the store's final value would depend on "
                "timing. Use a commutative semigroup, or opt in with "
                f"options={{{label!r}: AllowNonCommutative()}} if the order does not matter "
                "to you (the memory and batch platforms keep input order)")
        if isinstance(summer.store, InMemoryStore) and not self.allow_in_memory_stores:
            raise PlanningError(
                f"{summer.describe()} merges into an InMemoryStore, which lives in one process; "
                "a deployed topology's summers run in other processes (on the heron engine, "
                "each task is one). Use SQLiteStore(path) with an absolute path, or run the job "
                "with run_streaming(), which puts a SQLite file behind in-memory stores")

    # -- naming and edges ----------------------------------------------------------------
    def _name(self, index: int, draft: _Draft) -> str:
        if draft.role == SPOUT:
            label = "source"
        elif draft.role == SUMMER:
            label = "sum_by_key"
        else:
            logic = [m for m in draft.members if m.kind not in NO_OP_KINDS]
            label = logic[-1].op if logic else "pass"
        given = self._given_name(draft)
        return f"{label}-{index}-{_safe(given)}" if given else f"{label}-{index}"

    def _given_name(self, draft: _Draft) -> str | None:
        """The ``name()`` right after the node's output, else the last one inside it."""
        output = draft.members[-1]
        if self.graph.fan_out(output) == 1:
            (dependant,) = self.graph.dependants_of(output)
            if dependant.kind is NodeKind.NAMED:
                return dependant.given_name
        for member in reversed(draft.members):
            if member.kind is NodeKind.NAMED:
                return member.given_name
        return None

    def _edges(self, draft: _Draft, draft_of: Mapping[int, _Draft],
               node_of: Mapping[int, str]) -> tuple[Edge, ...]:
        inside = {m.id for m in draft.members}
        # The member consuming each member inside the node (unique: forks split, rule 1).
        next_in_node: dict[int, Producer] = {}
        for member in draft.members:
            for parent in member.data_parents:
                if parent.id in inside:
                    next_in_node[parent.id] = member
        paths: dict[str, list[tuple[int, ...]]] = {}
        for member in draft.members:
            for side, parent in enumerate(member.data_parents):
                if parent.id in inside:
                    continue
                codes = [_merge_code(self.order[member.id], side)] \
                    if member.kind is NodeKind.MERGE else []
                current = member
                while current.id in next_in_node:
                    following = next_in_node[current.id]
                    if following.kind is NodeKind.MERGE:
                        codes.append(_merge_code(self.order[following.id],
                                                 following.parents.index(current)))
                    current = following
                paths.setdefault(node_of[parent.id], []).append(tuple(codes))
        return tuple(Edge(source, tuple(codes)) for source, codes in paths.items())

    # -- a node's runtime payload ----------------------------------------------------------
    def _node(self, draft: _Draft, name: str, inputs: tuple[Edge, ...],
              consumers: tuple[str, ...], key_label: str, is_tail: bool) -> PlannedNode:
        graph, options = self.graph, self.job.options
        members = draft.members
        output = members[-1]
        ops: list[Op] = []
        source = None
        source_ordinal = -1
        source_label = ""
        summer_spec = None
        config: dict[str, Any] = {}
        for member in members:
            kind = member.kind
            if kind is NodeKind.SOURCE:
                source = _absolute(member.source)
                sources = [n for n in graph.nodes if n.kind is NodeKind.SOURCE]
                source_ordinal = sources.index(member)
                source_label = member.describe()
            elif kind in EXPANDING_KINDS:
                ops.append(StepOp(compile_step(member), kind in _POSITIONAL))
            elif kind is NodeKind.LEFT_JOIN:
                ops.append(JoinOp(member.service, member.describe()))
            elif kind is NodeKind.WRITE:
                ops.append(WriteOp(member.sink, member.describe(), f"w{self.order[member.id]}"))
            elif kind is NodeKind.SUMMER:
                summer_spec = self._summer(member)
                if summer_spec.cache_size:
                    config["topology.tick.tuple.freq.secs"] = summer_spec.flush_seconds
        if draft.role == SPOUT:
            option: Any = resolve(graph, next(m for m in members if m.kind is NodeKind.SOURCE),
                                  SourceParallelism, options)
            parallelism = option.count if option else DEFAULT_SOURCE_PARALLELISM
        elif draft.role == SUMMER:
            summer = next(m for m in members if m.kind is NodeKind.SUMMER)
            option = resolve(graph, summer, SummerParallelism, options)
            parallelism = option.count if option else DEFAULT_SUMMER_PARALLELISM
        else:
            option = resolve(graph, output, FlatMapParallelism, options)
            parallelism = option.count if option else DEFAULT_FLAT_MAP_PARALLELISM
        return PlannedNode(
            name=name, role=draft.role, members=tuple(m.describe() for m in members),
            parallelism=parallelism, inputs=inputs, consumers=consumers,
            keyed_output=bool(key_label), key_label=key_label, ops=tuple(ops), source=source,
            source_ordinal=source_ordinal, source_label=source_label, summer=summer_spec,
            is_tail=is_tail, config=config)

    def _summer(self, summer: Producer) -> SummerSpec:
        graph, options = self.graph, self.job.options
        cache = resolve(graph, summer, CacheSize, options)
        flush = resolve(graph, summer, FlushFrequency, options)
        flush_seconds = flush.seconds if flush else DEFAULT_FLUSH_SECONDS
        timeout = self.job_timeout
        if cache and cache.lower_bound and flush_seconds >= timeout:
            raise PlanningError(
                f"{summer.describe()}: FlushFrequency({flush_seconds}) must be shorter than "
                f"topology.message.timeout.secs ({timeout}): a cached input is acked only when "
                "its cache is flushed, so a longer period would time every input out")
        return SummerSpec(store=summer.store, semigroup=summer.semigroup, label=summer.describe(),
                          cache_size=cache.lower_bound if cache else 0,
                          cache_fuzz=cache.fuzz if cache else 0.0,
                          flush_seconds=flush_seconds)


def plan_streaming(tail: Any, options: Mapping[str, OptionsLike] | None = None, *,
                   name: str | None = None, config: Mapping[str, Any] | None = None,
                   allow_in_memory_stores: bool = False) -> StreamingPlan:
    """Validate ``tail`` and plan it into spout and bolt nodes (nothing runs).

    ``config`` holds Storm keys for the topology (reliability, timeouts...).
    ``allow_in_memory_stores`` is for ``run_streaming``, which swaps SQLite files in.
    """
    job = validate(tail, options)
    config = dict(config or {})
    timeout = config.get("topology.message.timeout.secs", 30)
    builder = _Builder(
        job,
        allow_in_memory_stores=allow_in_memory_stores,
        message_timeout=float(timeout) if isinstance(timeout, (int, float)) else 30.0,
    )
    return builder.build(_safe(name or _default_name(job.graph)), config)


def _default_name(graph: JobGraph) -> str:
    names = graph.names_of(graph.tail)
    return names[0] if names else "summingbird"


__all__ = ["FLAT_MAP", "SPOUT", "SUMMER", "AllowNonCommutative", "Edge", "JoinOp",
           "PlannedNode", "StepOp", "StreamingPlan", "SummerSpec", "WriteOp", "plan_streaming"]
