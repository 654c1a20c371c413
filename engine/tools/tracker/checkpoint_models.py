"""The tracker's response shapes for ``/topologies/checkpoints``: EFFECTIVELY_ONCE
topologies' consistent checkpoints, restores, rescales and each task's and Stream Manager's
checkpoint figures (pydantic, so /openapi.json documents them).

One job apart from ``engine.tools.tracker.models`` (plans, metrics, health); the names follow its
``...Model`` convention and the answer is built in ``engine.tools.tracker.answers``.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


# -- checkpoints (EFFECTIVELY_ONCE) ----------------------------------------------------------
class ConsistentCheckpointModel(BaseModel):
    """One globally consistent checkpoint, as the Topology Master recorded it in the state
    manager (``statefulcheckpoints/<topology>``): a rollback goes to one of these."""

    checkpoint_id: str
    packing_plan_id: str
    completed_at: float | None = Field(description="unix seconds it became consistent "
                                                   "(null when not recorded)")
    duration_secs: float = Field(description="from the start of the checkpoint to every "
                                             "task's state stored")
    bytes: int = Field(description="state bytes stored by every task together")


class RestoreModel(BaseModel):
    """One restore of the whole topology (a rollback, or the restore at start)."""

    reason: str = Field(description="why: the topology started, or the failure that made it "
                                    "roll back")
    checkpoint_id: str = Field(description="the checkpoint restored; \"\" means no checkpoint "
                                           "could be used (empty state)")
    at_start: bool = Field(description="the restore at the topology's (or Topology Master's) "
                                       "start, not a rollback after a failure")


class CheckpointFiguresModel(BaseModel):
    """The Topology Master's checkpoint figures (its ``__tmanager__`` metrics)."""

    completed: int
    abandoned: int = Field(description="checkpoints given up on (timed out aligning, a "
                                       "failure came, storage error): never a stall")
    last_checkpoint_id: str = Field(description="\"\" until one completes")
    last_duration_ms: int
    last_bytes: int
    restores: int = Field(description="restores since the Topology Master started, the one "
                                      "at start included")
    rollbacks: int = Field(description="restores after a failure (in the restore log)")
    last_restore: RestoreModel | None
    last_restore_ms: int = Field(description="how long the last restore took")
    restore_log: list[RestoreModel] = Field(
        description="the last restores the Topology Master keeps (20), newest first")
    last_rescale: list[RescaleModel] = Field(
        default_factory=list, description="the last parallelism change of stateful "
                                          "components: the key groups that moved with it")


class RescaleModel(BaseModel):
    """One stateful component's last change of parallelism (``heron update``, the Health
    Manager): its keyed state moved by key group."""

    component: str
    tasks_before: int
    tasks_after: int
    key_groups_moved: int


class TaskCheckpointModel(BaseModel):
    """One instance's side of the checkpoints (its own metrics)."""

    instance: str
    component: str
    task_id: int | None
    stateful: bool = Field(description="its class is a StatefulComponent (it has state to "
                                       "save); other tasks save nothing")
    saves: int
    state_bytes: int = Field(description="size of its last saved state")
    save_ms: float = Field(description="time its last save took")
    restores: int
    restore_ms: float = Field(description="time its last restore took")
    keyed_keys: int = Field(default=0, description="keys in its keyed state (state.keyed())")
    key_groups: int = Field(default=0, description="key groups it owns that hold keyed state")
    keys_written: int = Field(default=0, description="keys its last (incremental) save wrote")
    stale_secs: float | None = Field(default=None,
                                     description="seconds since it last reported, when over 5 s "
                                                 "(its figures are frozen)")


class StmgrCheckpointModel(BaseModel):
    """One Stream Manager's side: markers, alignments, held input, rollbacks."""

    id: str
    markers_sent: int
    alignments_abandoned: int
    held_bytes: int = Field(description="input held back while aligning, now")
    rollback_discarded_messages: int = Field(description="messages of an older incarnation "
                                                         "dropped after rollbacks")


class CheckpointsModel(BaseModel):
    """An EFFECTIVELY_ONCE topology's checkpoints and restores; for another mode,
    ``effectively_once`` false and a ``note`` saying it takes none (not an error)."""

    topology: str
    reliability_mode: str = Field(description="topology.reliability.mode as configured "
                                              "(ATLEAST_ONCE... when only Storm's keys say)")
    effectively_once: bool
    note: str = Field(default="", description="why some figures are missing, in one sentence")
    interval_secs: float | None = Field(default=None, description="topology.stateful.checkpoint"
                                                          ".interval.seconds")
    consistent: list[ConsistentCheckpointModel] = Field(
        default_factory=list, description="globally consistent checkpoints kept, newest first")
    tmanager: CheckpointFiguresModel | None = Field(
        default=None, description="the Topology Master's figures; null when it is not running or "
                          "did not answer (``note`` says which)")
    tasks: list[TaskCheckpointModel] = Field(default_factory=list)
    stmgrs: list[StmgrCheckpointModel] = Field(default_factory=list)
    endtime: float | None = Field(default=None, description="unix time of the Topology Master's "
                                                    "answer")
