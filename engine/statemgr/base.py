"""The state-manager interface: a small node store, and Heron's typed layout on top."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

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

#: Heron's node kinds and the message each holds.
KINDS: dict[str, Any] = {
    "topologies": topology_pb2.Topology,
    "packingplans": packing_plan_pb2.PackingPlan,
    "pplans": physical_plan_pb2.PhysicalPlan,
    "executionstate": execution_state_pb2.ExecutionState,
    "tmanagers": tmanager_pb2.TManagerLocation,
    "schedulers": scheduler_pb2.SchedulerLocation,
    #: not Heron's: the topology's CurveZMQ keys (engine/common/security/keys.py), owner-only
    "keys": security_pb2.TopologyKeys,
    #: not Heron's: the Health Manager's loop state and records (engine/healthmgr/store.py)
    "healthmgr": healthmgr_pb2.HealthState,
    #: Heron's list of globally consistent checkpoints (engine/tmanager/stateful_controller.py)
    "statefulcheckpoints": ckptmgr_pb2.StatefulConsistentCheckpoints,
}
#: Heron's kill order (RuntimeManagerRunner.cleanState).
CLEAN_ORDER = ("tmanagers", "packingplans", "pplans", "schedulers", "executionstate",
               "healthmgr", "statefulcheckpoints", "topologies", "keys")


class StateError(Exception):
    """The state store failed or holds something unexpected; the message names the node."""


class NodeExistsError(StateError):
    pass


class NoNodeError(StateError):
    pass


class StateManager(ABC):
    """Typed access to Heron's layout over a node store implemented by subclasses."""

    #: whether nodes this manager writes can be read by their owner alone (owner-only
    #: files; a digest-ACL'd ZooKeeper tree), so secrets such as a topology's keys may
    #: be stored in it
    protects_secrets: bool = False

    # -- the node store ----------------------------------------------------------------
    @abstractmethod
    def _create(self, path: str, data: bytes, ephemeral: bool) -> None:
        """Create a node; NodeExistsError when it exists (a live ephemeral counts)."""

    @abstractmethod
    def _set(self, path: str, data: bytes) -> None:
        """Replace a node's data; NoNodeError when it does not exist."""

    @abstractmethod
    def _get(self, path: str) -> bytes | None:
        """A node's data, or None when absent (or ephemeral with a dead owner)."""

    @abstractmethod
    def _delete(self, path: str) -> None:
        """Remove a node if present."""

    @abstractmethod
    def _children(self, path: str) -> list[str]:
        """Names under a path, sorted; [] when the path does not exist."""

    @abstractmethod
    def close(self) -> None:
        """Release the store; ephemeral nodes this manager created disappear."""

    def __enter__(self) -> StateManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- Heron's typed layout ----------------------------------------------------------
    @staticmethod
    def _path(kind: str, name: str) -> str:
        if kind not in KINDS:
            raise StateError(f"unknown state kind {kind!r}; kinds: {', '.join(KINDS)}")
        if not name or "/" in name or name.startswith("."):
            raise StateError(f"invalid topology name {name!r} (no '/', not empty, no leading '.')")
        return f"{kind}/{name}"

    def create(self, kind: str, name: str, message: Message, *, ephemeral: bool = False) -> None:
        self._create(self._path(kind, name), message.SerializeToString(), ephemeral)

    def set(self, kind: str, name: str, message: Message) -> None:
        self._set(self._path(kind, name), message.SerializeToString())

    def get(self, kind: str, name: str) -> Any | None:
        data = self._get(self._path(kind, name))
        if data is None:
            return None
        message = KINDS[kind]()
        try:
            message.ParseFromString(data)
        except Exception as exc:
            raise StateError(f"{kind}/{name}: stored data is not a {message.DESCRIPTOR.full_name}: "
                             f"{exc}") from None
        return message

    def delete(self, kind: str, name: str) -> None:
        self._delete(self._path(kind, name))

    def topologies(self) -> list[str]:
        """Names of the topologies that exist (a topology exists when its node does)."""
        return self._children("topologies")

    def clean(self, name: str) -> None:
        """Remove everything stored for a topology, in Heron's kill order."""
        for kind in CLEAN_ORDER:
            self.delete(kind, name)
