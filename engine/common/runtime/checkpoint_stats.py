"""What a run's checkpoints did, for its summary: the same type on both engines (the
storm engine's checkpointer fills it as it goes; a heron run from the Topology Master's
figures), so ``heron run`` and conformance report them alike."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

#: the reasons the first restore of a run gives (the storm engine's, the Topology Master's)
START_REASONS = ("start", "the topology started")


@dataclass
class RestoreRecord:
    """One rollback (or the restore at start): to which checkpoint, and why."""

    #: the checkpoint restored ("" when no checkpoint could be used: empty state)
    checkpoint_id: str
    reason: str
    #: checkpoints skipped because they could not be read, with what was wrong
    skipped: list[str] = field(default_factory=list)
    at: float = field(default_factory=time.time)


@dataclass
class CheckpointStats:
    """What the checkpointer did in a run, for ``RunResult.checkpoints``."""

    storage: str = ""
    completed: int = 0
    #: abandoned for any reason (timed out, a failure came, storage error, a hook emitted)
    abandoned: int = 0
    timed_out: int = 0
    last_checkpoint_id: str = ""
    last_duration_secs: float = 0.0
    last_bytes: int = 0
    #: bytes of the last checkpoint per "component:task"
    last_bytes_per_task: dict[str, int] = field(default_factory=dict)
    restores: list[RestoreRecord] = field(default_factory=list)

    @property
    def rollbacks(self) -> int:
        """Restores after a failure (the restore at start is not one)."""
        return sum(1 for r in self.restores if r.reason not in START_REASONS)
