"""The state manager interface (Heron's ``IStateManager``) as its users see it: typed
nodes per topology (``topologies``, ``packingplans``, ``pplans``, ``executionstate``,
``tmanagers``, ``schedulers``, ...). engine.statemgr.base.StateManager is the base its
implementations (local files, ZooKeeper) share."""

from __future__ import annotations

from typing import Literal, Protocol, overload, runtime_checkable

from google.protobuf.message import Message

from engine.messages import (
    ckptmgr_pb2,
    execution_state_pb2,
    healthmgr_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    scheduler_pb2,
    security_pb2,
    tmanager_pb2,
    topology_pb2,
)


@runtime_checkable
class StateManager(Protocol):
    def create(self, kind: str, name: str, message: Message, *, ephemeral: bool = False) -> None:
        """Create node ``kind/name``; NodeExistsError when it exists."""

    def set(self, kind: str, name: str, message: Message) -> None:
        """Create or replace node ``kind/name``."""

    @overload
    def get(self, kind: Literal["topologies"], name: str) -> topology_pb2.Topology | None: ...
    @overload
    def get(self, kind: Literal["packingplans"], name: str
            ) -> packing_plan_pb2.PackingPlan | None: ...
    @overload
    def get(self, kind: Literal["pplans"], name: str) -> physical_plan_pb2.PhysicalPlan | None: ...
    @overload
    def get(self, kind: Literal["executionstate"], name: str
            ) -> execution_state_pb2.ExecutionState | None: ...
    @overload
    def get(self, kind: Literal["tmanagers"], name: str
            ) -> tmanager_pb2.TManagerLocation | None: ...
    @overload
    def get(self, kind: Literal["schedulers"], name: str
            ) -> scheduler_pb2.SchedulerLocation | None: ...
    @overload
    def get(self, kind: Literal["keys"], name: str) -> security_pb2.TopologyKeys | None: ...
    @overload
    def get(self, kind: Literal["healthmgr"], name: str) -> healthmgr_pb2.HealthState | None: ...
    @overload
    def get(self, kind: Literal["statefulcheckpoints"], name: str
            ) -> ckptmgr_pb2.StatefulConsistentCheckpoints | None: ...
    @overload
    def get(self, kind: str, name: str) -> Message | None: ...
    def get(self, kind: str, name: str) -> Message | None:
        """The message at ``kind/name`` (typed by its kind), or None."""

    def delete(self, kind: str, name: str) -> None:
        """Remove node ``kind/name``; missing is fine."""

    def topologies(self) -> list[str]:
        """The names of the stored topologies."""

    def clean(self, name: str) -> None:
        """Remove every node of topology ``name``."""

    def close(self) -> None:
        """Release the connection (ephemeral nodes go with it)."""
