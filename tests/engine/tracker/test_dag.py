"""The DAG layout the page draws: every component once, edges left to right in layer
order, boxes that do not overlap, cycles drawn as back edges, the grouping on each edge."""

from __future__ import annotations

import itertools

from engine.common.plan.logical import ComponentDef, InputDef, LogicalPlan, StreamDef
from engine.tools.tracker.dag import layout_plan


def component(name: str, kind: str, inputs: tuple[InputDef, ...] = (), par: int = 1,
              streams: tuple[str, ...] = ("default",)) -> ComponentDef:
    return ComponentDef(name=name, kind=kind, parallelism=par, inputs=inputs,
                        outputs={s: StreamDef(name, s, ("x",)) for s in streams},
                        python_class=f"m:{name}")


def test_a_chain_is_laid_out_left_to_right_with_groupings_on_edges():
    plan = LogicalPlan("chain", [
        component("spout", "spout", par=2),
        component("split", "bolt", (InputDef("spout"),)),
        component("count", "bolt", (InputDef("split", grouping="fields", fields=("x",)),)),
    ])
    layout = layout_plan(plan)
    nodes = {n.name: n for n in layout.nodes}
    assert [nodes[n].layer for n in ("spout", "split", "count")] == [0, 1, 2]
    assert nodes["spout"].x < nodes["split"].x < nodes["count"].x
    assert nodes["spout"].parallelism == 2 and nodes["spout"].kind == "spout"
    labels = {(e.source, e.target): e.label for e in layout.edges}
    assert labels == {("spout", "split"): "shuffle", ("split", "count"): "fields(x)"}
    assert all(e.path.startswith("M ") and not e.back for e in layout.edges)
    assert layout.width >= nodes["count"].x + nodes["count"].width
    assert layout.height >= max(n.y + n.height for n in layout.nodes)


def test_a_diamond_puts_the_join_after_its_longest_input_and_nothing_overlaps():
    plan = LogicalPlan("diamond", [
        component("a", "spout"), component("b", "spout"),
        component("c", "bolt", (InputDef("a"),)),
        component("d", "bolt", (InputDef("c"),)),
        component("e", "bolt", (InputDef("b"), InputDef("d"), InputDef("a", grouping="all"))),
    ])
    layout = layout_plan(plan)
    nodes = {n.name: n for n in layout.nodes}
    assert sorted(nodes) == ["a", "b", "c", "d", "e"]
    assert nodes["e"].layer == 3
    for first, second in itertools.combinations(layout.nodes, 2):
        apart_x = first.x + first.width <= second.x or second.x + second.width <= first.x
        apart_y = first.y + first.height <= second.y or second.y + second.height <= first.y
        assert apart_x or apart_y, f"{first.name} and {second.name} overlap"


def test_a_cycle_is_drawn_with_a_back_edge_and_streams_are_named():
    plan = LogicalPlan("loop", [
        component("spout", "spout"),
        component("work", "bolt", (InputDef("spout"), InputDef("retry", stream="again")),
                  streams=("default",)),
        component("retry", "bolt", (InputDef("work"),), streams=("again",)),
        component("self", "bolt", (InputDef("spout"), InputDef("self", stream="loop",
                                                                grouping="global")),
                  streams=("default", "loop")),
    ])
    layout = layout_plan(plan)
    edges = {(e.source, e.target): e for e in layout.edges}
    assert edges[("retry", "work")].back and not edges[("work", "retry")].back
    assert edges[("retry", "work")].label == "again: shuffle"
    assert edges[("self", "self")].back and edges[("self", "self")].label == "loop: global"
    nodes = {n.name: n for n in layout.nodes}
    assert nodes["work"].layer == 1 and nodes["retry"].layer == 2
    # back edges arc under the graph: the layout leaves room for them
    assert layout.height > max(n.y + n.height for n in layout.nodes) + 24
