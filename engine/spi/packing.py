"""The packing interface (Heron's ``IPacking``): which instances run in which container,
and how big each container is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from engine.common.plan.logical import LogicalPlan
from engine.spi.packing_plan import PackingPlan


@runtime_checkable
class Packing(Protocol):
    def pack(self, plan: LogicalPlan, conf: Mapping[str, Any]) -> PackingPlan:
        """The packing plan of the logical plan ``plan`` under the topology config
        ``conf``; PackingError naming the key when it cannot be made."""
