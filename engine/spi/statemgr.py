"""The state manager interface (Heron's ``IStateManager``) as its users see it: typed
nodes per topology (``topologies``, ``packingplans``, ``pplans``, ``executionstate``,
``tmanagers``, ``schedulers``, ...). engine.statemgr.base.StateManager is the base its
implementations (local files, ZooKeeper) share."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from google.protobuf.message import Message


@runtime_checkable
class StateManager(Protocol):
    def create(self, kind: str, name: str, message: Message, *, ephemeral: bool = False) -> None:
        """Create node ``kind/name``; NodeExistsError when it exists."""

    def set(self, kind: str, name: str, message: Message) -> None:
        """Create or replace node ``kind/name``."""

    def get(self, kind: str, name: str) -> Any | None:
        """The message at ``kind/name``, or None."""

    def delete(self, kind: str, name: str) -> None:
        """Remove node ``kind/name``; missing is fine."""

    def topologies(self) -> list[str]:
        """The names of the stored topologies."""

    def clean(self, name: str) -> None:
        """Remove every node of topology ``name``."""

    def close(self) -> None:
        """Release the connection (ephemeral nodes go with it)."""
