"""Per-task counters, written by the task's own executor thread only (so no locks on the
hot path) and read, slightly stale, by the status line and the final summary."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields

#: Heron's counters: monotonic per process lifetime (a restarted process starts again at
#: 0). The Prometheus endpoints serve them so; the Topology Master adds up each
#: instance's across its restarts (engine/tmanager/counter_totals.py).
COUNTERS = frozenset({
    "__emit-count", "__transfer-count", "__execute-count", "__ack-count", "__fail-count",
    "__error-count", "__restart-count", "__timeout-count", "__tuples-received",
    "__tuples-sent", "__tuples-dropped", "__malformed-messages", "__trees-completed",
    "__trees-failed", "__trees-forgotten"})


@dataclass
class TaskStats:
    component: str
    task: int
    emitted: int = 0        # emit calls (Storm's "emitted")
    transferred: int = 0    # copies sent to consumer tasks (Storm's "transferred")
    executed: int = 0       # input tuples processed (bolts)
    acked: int = 0          # bolts: inputs acked; spouts: ack() callbacks
    failed: int = 0         # bolts: inputs failed; spouts: fail() callbacks
    errors: int = 0         # reported errors (raise_exception / error command)
    restarts: int = 0       # times the task was restarted after raising (or failing to start)
    last_error: str = ""
    #: failing again and again with no progress (engine.common.process.restart_policy)
    crash_looping: bool = False


@dataclass
class ComponentStats:
    component: str
    kind: str
    tasks: int = 0
    emitted: int = 0
    transferred: int = 0
    executed: int = 0
    acked: int = 0
    failed: int = 0
    errors: int = 0
    restarts: int = 0
    last_error: str = ""
    #: tasks of the component that are crash-looping
    crash_looping: int = 0


_SUMMED = [f.name for f in fields(TaskStats)
           if f.name not in ("component", "task", "last_error", "crash_looping")]


def aggregate(kinds: dict[str, str], tasks: Iterable[TaskStats]) -> dict[str, ComponentStats]:
    """Roll task counters up per component, in the order components were declared."""
    out = {name: ComponentStats(name, kind) for name, kind in kinds.items()}
    for ts in tasks:
        cs = out.get(ts.component)
        if cs is None:
            continue
        cs.tasks += 1
        for name in _SUMMED:
            setattr(cs, name, getattr(cs, name) + getattr(ts, name))
        if ts.last_error:
            cs.last_error = ts.last_error
        if ts.crash_looping:
            cs.crash_looping += 1
    return out
