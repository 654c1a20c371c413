"""Laying out a topology's logical plan as a left-to-right DAG, server-side.

The page draws the result as inline SVG with no graph library: every coordinate and
edge path is computed here. A layered (Sugiyama-style) layout: edges closing a cycle
are set aside, components are put in layers by their longest path from a spout, the
order inside each layer is improved with a few barycentre sweeps (fewer crossings),
and edges become cubic Bézier paths; a cycle's closing edges arc below the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.common.plan.logical import LogicalPlan

NODE_WIDTH = 190
NODE_HEIGHT = 66
GAP_X = 120
GAP_Y = 34
MARGIN = 24
#: room under the graph for the arcs of edges that close a cycle
BACK_EDGE_ROOM = 56
SWEEPS = 4


@dataclass
class Node:
    name: str
    kind: str
    parallelism: int
    layer: int = 0
    x: float = 0.0
    y: float = 0.0
    width: float = NODE_WIDTH
    height: float = NODE_HEIGHT


@dataclass
class Edge:
    source: str
    target: str
    #: one entry per subscribed stream: {"stream", "grouping", "fields"}
    streams: list[dict[str, Any]] = field(default_factory=list)
    back: bool = False
    path: str = ""
    label: str = ""
    label_x: float = 0.0
    label_y: float = 0.0


@dataclass
class Layout:
    width: float
    height: float
    nodes: list[Node]
    edges: list[Edge]


def _grouping_label(grouping: str, fields: tuple[str, ...]) -> str:
    return f"{grouping}({', '.join(fields)})" if fields else grouping


def layout_plan(plan: LogicalPlan) -> Layout:
    """The layout of ``plan`` (an ``engine.common.plan.logical.LogicalPlan``)."""
    order = list(plan.components)
    nodes = {name: Node(name, c.kind, c.parallelism) for name, c in plan.components.items()}
    edges: dict[tuple[str, str], Edge] = {}
    for name, component in plan.components.items():
        for sub in component.inputs:
            edge = edges.setdefault((sub.source, name), Edge(sub.source, name))
            edge.streams.append({"stream": sub.stream, "grouping": sub.grouping,
                                 "fields": list(sub.fields)})
    for edge in edges.values():
        parts = [(f"{s['stream']}: " if s["stream"] != "default" else "")
                 + _grouping_label(s["grouping"], tuple(s["fields"])) for s in edge.streams]
        edge.label = "; ".join(parts)
    _mark_back_edges(order, nodes, edges)
    layers = _assign_layers(order, nodes, edges)
    _order_layers(layers, edges)
    return _place(layers, nodes, edges)


def _mark_back_edges(order: list[str], nodes: dict[str, Node],
                     edges: dict[tuple[str, str], Edge]) -> None:
    """Depth-first from the spouts (then anything unreached): an edge to a component
    still on the stack closes a cycle."""
    successors: dict[str, list[str]] = {n: [] for n in order}
    for source, target in edges:
        successors[source].append(target)
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    starts = [n for n in order if nodes[n].kind == "spout"] + order
    for start in starts:
        if start in state:
            continue
        stack = [(start, iter(successors[start]))]
        state[start] = 1
        while stack:
            current, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[current] = 2
                stack.pop()
            elif state.get(child) == 1:
                edges[(current, child)].back = True
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(successors[child])))


def _assign_layers(order: list[str], nodes: dict[str, Node],
                   edges: dict[tuple[str, str], Edge]) -> list[list[str]]:
    forward = [(s, t) for (s, t), e in edges.items() if not e.back]
    incoming = {n: 0 for n in order}
    for _, target in forward:
        incoming[target] += 1
    ready = [n for n in order if incoming[n] == 0]
    while ready:
        current = ready.pop(0)
        for source, target in forward:
            if source != current:
                continue
            nodes[target].layer = max(nodes[target].layer, nodes[current].layer + 1)
            incoming[target] -= 1
            if incoming[target] == 0:
                ready.append(target)
    depth = max((n.layer for n in nodes.values()), default=0)
    layers: list[list[str]] = [[] for _ in range(depth + 1)]
    for name in order:
        layers[nodes[name].layer].append(name)
    return layers


def _order_layers(layers: list[list[str]], edges: dict[tuple[str, str], Edge]) -> None:
    """Barycentre sweeps: each component moves toward the mean position of its
    neighbours in the layer before (downward sweep) or after (upward sweep)."""
    forward = [(s, t) for (s, t), e in edges.items() if not e.back]
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        indices = range(1, len(layers)) if downward else range(len(layers) - 2, -1, -1)
        for i in indices:
            reference = layers[i - 1] if downward else layers[i + 1]
            position = {name: p for p, name in enumerate(reference)}
            current = {name: p for p, name in enumerate(layers[i])}
            centres = {}
            for name in layers[i]:
                if downward:
                    linked = [position[s] for s, t in forward if t == name and s in position]
                else:
                    linked = [position[t] for s, t in forward if s == name and t in position]
                centres[name] = sum(linked) / len(linked) if linked else float(current[name])
            layers[i].sort(key=lambda n: (centres[n], current[n]))


def _place(layers: list[list[str]], nodes: dict[str, Node],
           edges: dict[tuple[str, str], Edge]) -> Layout:
    tallest = max((len(layer) for layer in layers), default=1)
    body = tallest * NODE_HEIGHT + (tallest - 1) * GAP_Y
    for index, layer in enumerate(layers):
        span = len(layer) * NODE_HEIGHT + (len(layer) - 1) * GAP_Y
        top = MARGIN + (body - span) / 2
        for position, name in enumerate(layer):
            node = nodes[name]
            node.x = MARGIN + index * (NODE_WIDTH + GAP_X)
            node.y = top + position * (NODE_HEIGHT + GAP_Y)
    width = 2 * MARGIN + len(layers) * NODE_WIDTH + (len(layers) - 1) * GAP_X
    has_back = any(e.back for e in edges.values())
    height = 2 * MARGIN + body + (BACK_EDGE_ROOM if has_back else 0)
    bottom = MARGIN + body
    for edge in edges.values():
        _route(edge, nodes[edge.source], nodes[edge.target], bottom)
    ordered = [nodes[name] for layer in layers for name in layer]
    return Layout(width=width, height=height, nodes=ordered, edges=list(edges.values()))


def _route(edge: Edge, source: Node, target: Node, bottom: float) -> None:
    if edge.source == edge.target:  # a component consuming its own stream
        x0, y0 = source.x + source.width * 0.65, source.y
        x1 = source.x + source.width * 0.35
        edge.path = f"M {x0:.1f} {y0:.1f} C {x0 + 30:.1f} {y0 - 46:.1f} {x1 - 30:.1f} " \
                    f"{y0 - 46:.1f} {x1:.1f} {y0:.1f}"
        edge.label_x, edge.label_y = source.x + source.width / 2, y0 - 38
        return
    if edge.back:
        x0, y0 = source.x + source.width / 2, source.y + source.height
        x1, y1 = target.x + target.width / 2, target.y + target.height
        low = bottom + BACK_EDGE_ROOM - 12
        edge.path = f"M {x0:.1f} {y0:.1f} C {x0:.1f} {low:.1f} {x1:.1f} {low:.1f} " \
                    f"{x1:.1f} {y1:.1f}"
        edge.label_x, edge.label_y = (x0 + x1) / 2, low - 8
        return
    x0, y0 = source.x + source.width, source.y + source.height / 2
    x1, y1 = target.x, target.y + target.height / 2
    bend = max((x1 - x0) / 2, 30)
    edge.path = f"M {x0:.1f} {y0:.1f} C {x0 + bend:.1f} {y0:.1f} {x1 - bend:.1f} {y1:.1f} " \
                f"{x1:.1f} {y1:.1f}"
    # The Bézier's midpoint (t = 1/2) is the mean of its end points here.
    edge.label_x, edge.label_y = (x0 + x1) / 2, (y0 + y1) / 2 - 6
