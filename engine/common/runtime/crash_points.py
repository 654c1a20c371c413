"""Where a process of the effectively-once protocols can die, named once, and a test-only
way to make it die there.

A protocol is only as good as its worst crash point: every step of the checkpoint, restore,
two-phase-commit, rescale and savepoint protocols where a process can die is named in
:data:`POINTS`, with what must hold when it dies there (docs/stateful.md, "Crash points",
lists the same). The engine calls :func:`crash` at each of them.

In production nothing is armed and :func:`crash` returns at once: it reads one module
global. A test arms a point by setting ``HERON_TEST_CRASH_FILE`` (inherited by every process
of the topology) to a JSON file it writes: ``{"point": NAME, "arm": N, "where": WHO}``,
``where`` optional (a component name, a Stream Manager id, ``tmanager``). The first process
that reaches ``point`` (as ``where``, when given) while arm ``N`` is in force claims it by
creating ``<file>.fired-<N>`` (exclusively, so only one process dies per arm) and exits at
once with :data:`CRASH_EXIT`, as ``kill -9`` would: no ``finally``, no flush, no goodbye to
its peers. The fired file holds the point and the process's pid. tests/e2e/heron/
test_crash_points.py runs every point, and fails when a point is added here without being
exercised there.
"""

from __future__ import annotations

import json
import os
import time

__all__ = ["CRASH_EXIT", "CRASH_FILE_ENV", "POINTS", "crash"]

#: the environment variable naming the arming file (unset: nothing is ever armed)
CRASH_FILE_ENV = "HERON_TEST_CRASH_FILE"
#: the exit status of a process that died at a crash point (that of SIGKILL, as a shell
#: reports it)
CRASH_EXIT = 137

#: every crash point: name -> the step, and what must hold when a process dies there
POINTS: dict[str, str] = {
    # -- a task's part (engine/instance/stateful.py) ------------------------------------
    "instance.save.after_pre_save":
        "a task ran pre_save (a two-phase-commit sink: pre_commit made its transaction "
        "durable) and died before storing its state: the checkpoint is abandoned, the "
        "prepared transaction is in no stored state, so it is never committed and its "
        "records are replayed",
    "instance.save.after_store":
        "a task stored its state and died before reporting it: the checkpoint is "
        "abandoned (or times out); its files are never read, as no record names them",
    "instance.saved.after_post_save":
        "a task ran post_save (a sink: commit made the transaction visible) and died before "
        "its state forgot the transaction: the restore commits it again, and commit is "
        "idempotent",
    "instance.restore.after_load":
        "a task read its state for a restore and died before answering: the restore is "
        "retried when its process is back",
    "instance.restore.rescaled":
        "a task of a resized component (the old and new owners of key groups, heron update) "
        "read its share of the old tasks' state and died before answering: the restore, "
        "rescale included, is done again from the same checkpoint",
    "instance.restore.at_start":
        "a task restored, answered, and died as processing started: another restore "
        "follows",
    # -- a Stream Manager's part (engine/stmgr/stateful.py) -----------------------------
    "stmgr.stored.before_markers":
        "a Stream Manager heard a local task's state is stored and died before sending "
        "its markers downstream and the report on: the checkpoint is abandoned",
    "stmgr.aligned.before_forward":
        "a Stream Manager aligned a task's markers and died before asking the task to "
        "save: the checkpoint is abandoned; what it held back is replayed",
    "stmgr.restore.mid":
        "a Stream Manager asked its tasks to restore and died before they answered",
    "stmgr.restore.before_answer":
        "a Stream Manager's tasks all restored and it died before telling the Topology "
        "Master: the restore is done again",
    # -- the Topology Master's part (engine/tmanager/stateful_controller.py) ------------
    "tmanager.consistent.before_record":
        "every task's state is stored and the Topology Master died before recording the "
        "checkpoint consistent: it is not, and the restart restores the one before",
    "tmanager.consistent.before_notify":
        "the Topology Master recorded the checkpoint consistent and died before telling "
        "anyone: the restart restores it, and the sinks commit its transactions then",
    "tmanager.consistent.notified_some":
        "the Topology Master told one Stream Manager the checkpoint is consistent and died: "
        "some sinks committed, the others commit on the restore of the same checkpoint",
    "tmanager.restore.sent_some":
        "the Topology Master asked one Stream Manager to restore and died: its restart "
        "starts the restore again",
    "tmanager.restore.before_start":
        "every Stream Manager restored and the Topology Master died before starting "
        "processing: its restart restores again",
    # -- the storm engine, one process (engine/storm/checkpoint*.py): it dies whole, and
    # -- the next run with the same checkpoint root restores -------------------------------
    "storm.save.after_pre_save":
        "every stateful task ran pre_save (a sink prepared its transaction) and the process "
        "died before storing any state: no marker, the checkpoint does not exist, the "
        "prepared transaction is in no state and never committed; the next run restores the "
        "checkpoint before and replays",
    "storm.save.stored_some":
        "the process stored some tasks' state and died: without the marker, written last, "
        "the checkpoint is never restored",
    "storm.save.before_post_save":
        "the marker is stored (the checkpoint is consistent) and the process died before "
        "any post_save: the next run restores it and the sinks commit its transactions then",
    "storm.saved.post_save_some":
        "one task ran post_save (its sink committed) and the process died: the next run "
        "restores the same checkpoint, the others commit, and a repeated commit changes "
        "nothing",
    "storm.restore.after_load":
        "the process read a checkpoint's state to restore it and died before the tasks "
        "started: the next run restores it again",
    # -- savepoints (engine/statefulstorage/savepoints.py) ------------------------------
    "savepoint.copy.half_written":
        "the Topology Master copied part of a savepoint and died: the half-written copy is "
        "under a temporary name, never a savepoint; the next savepoint is whole",
}

_FILE = os.environ.get(CRASH_FILE_ENV) or None
#: the arming file's mtime and content when last read
_seen: tuple[float, dict] = (-1.0, {})


def crash(point: str, who: str = "", grace: float = 0.0) -> None:
    """Die here if a test armed ``point`` (for ``who``); nothing in production.
    ``grace``: seconds to wait first, for a point just after a send, so the message
    reaches its peer as it would had the process died a moment later (zmq sends from
    its own thread)."""
    if _FILE is None:
        return
    _maybe_die(_FILE, point, who, grace)


def _maybe_die(armed_file: str, point: str, who: str, grace: float) -> None:
    global _seen
    if point not in POINTS:
        raise ValueError(f"unknown crash point {point!r}: name it in engine.common.runtime."
                         "crash_points.POINTS")
    try:
        mtime = os.stat(armed_file).st_mtime
    except OSError:
        return
    if mtime != _seen[0]:
        try:
            with open(armed_file, encoding="utf-8") as source:
                _seen = (mtime, json.load(source))
        except (OSError, ValueError):
            return  # being written: read it next time
    armed = _seen[1]
    if armed.get("point") != point or (armed.get("where") and armed["where"] != who):
        return
    fired = f"{armed_file}.fired-{armed.get('arm', 0)}"
    try:
        fd = os.open(fired, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # another process died for this arm already
    os.write(fd, json.dumps({"point": point, "who": who, "pid": os.getpid()}).encode())
    os.fsync(fd)
    os.close(fd)
    if grace:
        time.sleep(grace)
    os._exit(CRASH_EXIT)
