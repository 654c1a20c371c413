"""What the Health Manager needs to know about the running topology, and nothing more.

The engine builds a :class:`TopologyView` from its physical plan and topology state at
every tick; the decision logic never reads plans or protobufs itself, so it can be tested
with a literal view and the engine can change its plan format freely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ComponentView:
    """One component: its instances (id -> container) and how it receives tuples.

    ``fields_grouped`` is true when any of its inputs is fields-grouped: changing its
    parallelism moves keys between instances, which a policy may forbid for scale-down.
    ``scaling_refused`` says why its parallelism must not change at all ("" when it may):
    a stateful component of an effectively-once topology whose per-task state cannot be
    shared out (engine/submitter/stateful_guard.py); every resolver that scales notes it
    instead."""

    name: str
    instances: Mapping[str, int]
    spout: bool = False
    fields_grouped: bool = False
    scaling_refused: str = ""

    @property
    def parallelism(self) -> int:
        return len(self.instances)


@dataclass(frozen=True)
class TopologyView:
    """The topology at one tick.

    ``active``: false while the topology is deactivated. ``updating``: true while any
    update runs (a manual ``heron update`` or one this Health Manager asked for), until the
    new physical plan is in place. ``config``: the topology config as it is now, where
    run-time toggles (``<policy-id>:runtime``) appear."""

    name: str
    components: Mapping[str, ComponentView]
    active: bool = True
    updating: bool = False
    config: Mapping[str, object] = field(default_factory=dict)

    def bolts(self) -> list[ComponentView]:
        """Bolts only, in name order: Heron's sensors read bolts, never spouts."""
        return [c for _, c in sorted(self.components.items()) if not c.spout]
