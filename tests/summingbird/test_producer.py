"""The algebra as a graph: immutability, structure for planners, and errors where written."""

from __future__ import annotations

import pytest

from compat.summingbird import (
    CollectorSink,
    InMemoryService,
    InMemoryStore,
    JobDefinitionError,
    JobGraph,
    NodeKind,
    SQLiteStore,
    source,
)
from compat.summingbird.functions import compile_step
from compat.summingbird.monoids import Max, Sum
from compat.summingbird.shapes import ShapeKind

HERE = "test_producer.py"


def test_methods_return_new_nodes_and_leave_parents_untouched():
    src = source(["a b", "c"])
    words = src.flat_map(str.split)
    pairs = words.map(lambda w: (w, 1))
    assert src.parents == () and words.parents == (src,) and pairs.parents == (words,)
    assert len({src.id, words.id, pairs.id}) == 3
    with pytest.raises(AttributeError):
        pairs.fn = len  # frozen


def test_graph_is_topological_with_edges_dependants_and_kinds():
    store = InMemoryStore()
    src = source(["a b"])
    words = src.flat_map(lambda s: [(w, 1) for w in s.split()])
    side = words.write(CollectorSink())
    tail = side.also(words.sum_by_key(store, Sum()).name("counts"))
    graph = JobGraph.of(tail)
    order = [n.id for n in graph]
    for node in graph:
        for parent in node.parents:
            assert order.index(parent.id) < order.index(node.id)
    assert graph.dependants_of(words) == tuple(n for n in graph if words in n.parents)
    assert graph.fan_out(words) == 2
    assert [n.kind for n in graph.of_kind(NodeKind.SUMMER)] == [NodeKind.SUMMER]
    assert (words.id, side.id) in graph.edges
    assert tail.kind is NodeKind.ALSO and tail.data_parents == (tail.parents[1],)
    assert tail.is_tail and side.is_tail and not words.is_tail


def test_self_merge_appears_twice_among_dependants():
    src = source([1, 2])
    doubled = src.merge(src)
    graph = JobGraph.of(doubled.map(lambda x: (x, 1)).sum_by_key(InMemoryStore(), Sum()))
    assert graph.dependants_of(src) == (doubled, doubled)


def test_names_of_are_downstream_nearest_first():
    src = source([("a", 1)])
    mapped = src.map_values(abs).name("inner")
    summed = mapped.sum_by_key(InMemoryStore(), Sum()).name("outer")
    graph = JobGraph.of(summed)
    assert graph.names_of(src) == ("inner", "outer")
    assert graph.names_of(summed.parents[0]) == ("outer",)  # the summer: only what follows it
    assert graph.option_names(src)[-1] == "DEFAULT"


def test_every_keyed_operation_builds_the_summingbird_node_kind():
    pairs = source([("k", 2)])
    expectations = {
        "map_values": (pairs.map_values(str), NodeKind.VALUE_FLAT_MAP),
        "flat_map_values": (pairs.flat_map_values(lambda v: [v]), NodeKind.VALUE_FLAT_MAP),
        "map_keys": (pairs.map_keys(str.upper), NodeKind.KEY_FLAT_MAP),
        "flat_map_keys": (pairs.flat_map_keys(lambda k: [k]), NodeKind.KEY_FLAT_MAP),
        "filter_keys": (pairs.filter_keys(bool), NodeKind.OPTION_MAP),
        "left_join": (pairs.left_join(InMemoryService({})), NodeKind.LEFT_JOIN),
    }
    for op, (node, kind) in expectations.items():
        assert (node.op, node.kind) == (op, kind)
    assert [n.kind for n in JobGraph.of(source([1]).lookup(InMemoryService({})).write(print))][
        1:4
    ] == [NodeKind.OPTION_MAP, NodeKind.LEFT_JOIN, NodeKind.VALUE_FLAT_MAP]


def test_plus_is_merge_and_either_merges_two_mapped_sides():
    a, b = source([1]), source(["x"])
    merged = a + b
    assert merged.kind is NodeKind.MERGE and merged.parents == (a, b)
    either = a.either(b)
    assert either.kind is NodeKind.MERGE
    assert [p.op for p in either.parents] == ["either", "either"]


def test_call_site_and_describe_point_at_the_job_line():
    node = source([1]).map(str)
    assert node.call_site.startswith(f"tests/summingbird/{HERE}:") or HERE in node.call_site
    assert "'map'" in node.describe() and str(node.id) in node.describe()


# -- shapes: what is known before running --------------------------------------------------

def test_shapes_from_source_elements_and_annotations():
    def to_pair(x: str) -> tuple[str, int]:
        return (x, 1)

    def to_int(x: str) -> int:
        return len(x)

    def words(line: str) -> list[str]:
        return line.split()

    assert source(["a"]).shape.kind is ShapeKind.NOT_PAIRS
    assert source([("a", 1)]).shape.kind is ShapeKind.PAIRS
    assert source([("a", 1), "b"]).shape.kind is ShapeKind.UNKNOWN
    strings = source(["a"])
    assert strings.map(to_pair).shape.kind is ShapeKind.PAIRS
    assert strings.map(to_int).shape.kind is ShapeKind.NOT_PAIRS
    assert strings.map(lambda s: s).shape.kind is ShapeKind.UNKNOWN
    assert strings.flat_map(words).shape.kind is ShapeKind.NOT_PAIRS
    assert strings.filter(bool).shape.kind is ShapeKind.NOT_PAIRS
    assert (strings + source([("a", 1)])).shape.kind is ShapeKind.UNKNOWN


# -- errors where the job is written --------------------------------------------------------

def test_keyed_operation_on_a_non_pair_stream_is_refused_where_written():
    lines = source(["the quick fox", "a dog"])
    for build in (lambda: lines.map_values(len), lambda: lines.flat_map_keys(list),
                  lambda: lines.left_join(InMemoryService({})),
                  lambda: lines.sum_by_key(InMemoryStore(), Sum()), lambda: lines.swap()):
        with pytest.raises(JobDefinitionError) as info:
            build()
        message = str(info.value)
        assert "(key, value) pairs" in message
        assert "'source'" in message and "'the quick fox' (str)" in message
        assert HERE in message


def test_annotated_non_pair_map_is_refused_before_sum_by_key():
    def length(word: str) -> int:
        return len(word)

    with pytest.raises(
        JobDefinitionError, match=r"int values \(.*length .*annotated to return int"
    ):
        source(["a"]).map(length).sum_by_key(InMemoryStore(), Sum())


def test_store_without_merge_is_refused_with_a_hint():
    pairs = source([("a", 1)])
    with pytest.raises(
        JobDefinitionError, match=r"has no merge\(key, delta\).*InMemoryStore\(initial"
    ):
        pairs.sum_by_key({}, Sum())

    class ReadOnly:
        def get(self, key):
            return None

    with pytest.raises(JobDefinitionError, match=r"ReadOnly\) has no merge"):
        pairs.sum_by_key(ReadOnly(), Sum())


def test_semigroup_and_service_and_sink_are_checked():
    pairs = source([("a", 1)])
    with pytest.raises(JobDefinitionError, match="not a semigroup"):
        pairs.sum_by_key(InMemoryStore(), sum)
    with pytest.raises(JobDefinitionError, match=r"needs a service with get\(key\)"):
        pairs.left_join({"a"})
    with pytest.raises(JobDefinitionError, match="needs a sink"):
        pairs.write("out.jsonl")
    with pytest.raises(JobDefinitionError, match="needs a function"):
        pairs.map(3)


def test_a_store_keeps_one_semigroup(tmp_path):
    for store in (InMemoryStore(), SQLiteStore(tmp_path / "s.db")):
        source([("a", 1)]).sum_by_key(store, Sum())
        source([("b", 2)]).sum_by_key(store, Sum())  # an equal semigroup is fine
        with pytest.raises(JobDefinitionError, match=r"already merges with Sum\(\), not Max\(\)"):
            source([("a", 1)]).sum_by_key(store, Max())


def test_also_needs_a_tail_and_names_are_validated():
    with pytest.raises(JobDefinitionError, match="must be called on a tail"):
        source([1]).also(source([2]).write(print))
    with pytest.raises(JobDefinitionError, match="reserved"):
        source([1]).name("DEFAULT")
    with pytest.raises(JobDefinitionError, match="non-empty string"):
        source([1]).name("")


def test_sources_refuse_strings_iterators_and_none():
    with pytest.raises(JobDefinitionError, match="JsonLinesSource"):
        source("events.jsonl")
    with pytest.raises(JobDefinitionError, match="one-shot iterator"):
        source(x for x in [1, 2])
    with pytest.raises(JobDefinitionError, match="element 1 is None"):
        source([1, None])


def test_compile_step_refuses_nodes_that_do_not_expand():
    with pytest.raises(JobDefinitionError, match="does not expand"):
        compile_step(source([1]))
