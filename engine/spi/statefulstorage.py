"""The state storage interface (Heron's ``IStatefulStorage``): where checkpoints live.

Instances write and read their own state through it (state bytes never travel through a
Stream Manager or the Topology Master); the Topology Master only deletes checkpoints it
no longer keeps. A checkpoint is addressed by (checkpoint id, component, task).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class CheckpointUnreadable(Exception):
    """A stored checkpoint is missing, cut short or corrupt; the message says which and
    where. The Topology Master then restores from an older checkpoint."""


@runtime_checkable
class StatefulStorage(Protocol):
    def store(self, checkpoint_id: str, component: str, task: int, data: bytes) -> int:
        """Store one task's state durably (visible whole or not at all); bytes written."""

    def load(self, checkpoint_id: str, component: str, task: int) -> bytes:
        """One task's state; raises ``CheckpointUnreadable``."""

    def store_named(self, checkpoint_id: str, component: str, name: str, data: bytes) -> int:
        """Store a named file of a component's checkpoint (key groups, manifests); a name
        ending in ``.refs`` lists, one per line, older checkpoints this one reads from,
        which ``dispose`` then keeps."""

    def load_named(self, checkpoint_id: str, component: str, name: str) -> bytes:
        """A named file; raises ``CheckpointUnreadable``."""

    def names(self, checkpoint_id: str, component: str) -> list[str]:
        """The files stored for a component in a checkpoint (``<task>.state`` among them)."""

    def checkpoints(self) -> list[str]:
        """The ids of the checkpoints with anything stored, in no order."""

    def dispose(self, keep: set[str]) -> int:
        """Delete every checkpoint not in ``keep`` nor read by one in it (its ``.refs``);
        how many were deleted."""

    def describe(self) -> str:
        """Where the checkpoints are, for messages."""
