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

    def checkpoints(self) -> list[str]:
        """The ids of the checkpoints with anything stored, in no order."""

    def dispose(self, keep: set[str]) -> int:
        """Delete every checkpoint not in ``keep``; how many were deleted."""

    def describe(self) -> str:
        """Where the checkpoints are, for messages."""
