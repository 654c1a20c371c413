"""A job's whole graph, as planners need it: nodes in order, edges, dependants, names.

A ``Producer`` knows its parents only. Planning needs the other direction too (who
consumes a node, how many consumers it has, which ``name`` s lie downstream for option
lookup), so ``JobGraph.of(tail)`` computes it once. Node order is topological (every
node after its parents) and deterministic, which the memory platform relies on for
a reproducible order of side effects.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from .producer import DEFAULT_NAME, NodeKind, Producer


@dataclass(frozen=True)
class JobGraph:
    """The nodes reachable from ``tail`` and their dependants."""

    tail: Producer
    nodes: tuple[Producer, ...]
    _dependants: dict[int, tuple[Producer, ...]]

    @classmethod
    def of(cls, tail: Producer) -> JobGraph:
        order: list[Producer] = []
        seen: set[int] = set()
        # Iterative post-order DFS (parents first): long map chains must not hit
        # Python's recursion limit.
        stack: list[tuple[Producer, bool]] = [(tail, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if node.id in seen:
                continue
            seen.add(node.id)
            stack.append((node, True))
            for parent in reversed(node.parents):
                if parent.id not in seen:
                    stack.append((parent, False))
        dependants: dict[int, list[Producer]] = {n.id: [] for n in order}
        for node in order:
            for parent in node.parents:
                dependants[parent.id].append(node)
        return cls(tail, tuple(order), {k: tuple(v) for k, v in dependants.items()})

    def __iter__(self) -> Iterator[Producer]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def node(self, node_id: int) -> Producer:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(f"no node {node_id} in this graph")

    def dependants_of(self, node: Producer) -> tuple[Producer, ...]:
        """The nodes that consume ``node`` (a node merged with itself appears twice)."""
        return self._dependants[node.id]

    def fan_out(self, node: Producer) -> int:
        return len(self._dependants[node.id])

    @property
    def edges(self) -> tuple[tuple[int, int], ...]:
        """``(parent id, child id)`` for every dependency, in node order."""
        return tuple((p.id, n.id) for n in self.nodes for p in n.parents)

    def of_kind(self, kind: NodeKind) -> tuple[Producer, ...]:
        return tuple(n for n in self.nodes if n.kind is kind)

    @property
    def names(self) -> frozenset[str]:
        # a NAMED node has its given_name (None only on the other kinds)
        return frozenset(n.given_name for n in self.nodes  # type: ignore[misc]
                         if n.kind is NodeKind.NAMED)

    def names_of(self, node: Producer) -> tuple[str, ...]:
        """The ``name`` s downstream of ``node`` (itself included), nearest first.

        This is Summingbird's ``Dependants.namesOf``: options propagate backwards,
        toward sources, and never forwards; with two names in a row the closer wins.
        """
        found: list[str] = []
        seen = {node.id}
        queue = deque([node])
        while queue:
            current = queue.popleft()
            if current.kind is NodeKind.NAMED and current.given_name not in found:
                # a NAMED node has its given_name (None only on the other kinds)
                found.append(current.given_name)  # type: ignore[arg-type]
            for dependant in self._dependants[current.id]:
                if dependant.id not in seen:
                    seen.add(dependant.id)
                    queue.append(dependant)
        return tuple(found)

    def option_names(self, node: Producer) -> tuple[str, ...]:
        """The names to try for ``node``'s options: its names, then ``DEFAULT``."""
        return self.names_of(node) + (DEFAULT_NAME,)
