"""A windowed bolt under EFFECTIVELY_ONCE (real processes; issue 38): its counts are in its
state and each tick tuple (every 0.2 s) flushes them downstream, into a two-phase-commit
file sink, and clears them. ``kill -9`` hits a process in each container in turn (the
windowed bolt's instance in one, the Stream Manager of the other), each a rollback of the
whole topology, and the run waits for recovery between them.

Each rollback restores the windows the checkpoint held. The spouts take a second to
start again from restored state (``e2e.restore_ms``), so every restored windowed bolt
waits that long for the Topology Master's word that processing starts, and a tick falls
in that time: a restored bolt must run no tick until then. A tick run before it flushed
the restored window to a container still restoring, which dropped it, while the cleared
window stayed cleared: that window was lost.

At the end the flushed windows, summed per key, are exactly what the spouts produced (no
window lost, none counted twice), and no (task, window, key) was committed twice.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from compat.connectors import read_committed
from engine.common.process.spawn import read_pid_file
from tests.e2e.heron.helpers import PROJECTS, HeronRun, log_warnings, wait_until

PROJECT = PROJECTS / "stateful"
sys.path.insert(0, str(PROJECT / "src"))
from issue38_parts import record_key  # noqa: E402

pytestmark = pytest.mark.timeout(150)

#: records per spout task: at the slow pace (5 every 20 ms per task) over 30 s, far more
#: than the kills take; the rest goes fast once they are done
RECORDS = 8_000
SPOUT_TASKS = 2


def figures(run: HeronRun) -> dict[str, str]:
    return run.metrics().get("heron-tmanager", {})


def count(run: HeronRun, key: str) -> int:
    return int(figures(run).get(key, "0"))


def flushed(out: Path) -> list[list]:
    """(task, window, key, count) of every committed flush."""
    return [json.loads(line) for line in read_committed(out)]


def summed(out: Path) -> Counter:
    """The committed flushes' counts, summed per key."""
    got: Counter = Counter()
    for _task, _window, key, n in flushed(out):
        got[key] += n
    return got


def test_a_windowed_bolt_killed_in_each_container_flushes_exact_windows(tmp_path,
                                                                        isolated_imports):
    out = tmp_path / "out"
    fast = tmp_path / "fast"
    run = HeronRun(PROJECT, "windowed_counts", tmp_path / "run", workers=2,
                   options={"e2e.records": RECORDS, "e2e.per_call": 5, "e2e.pause_ms": 20,
                            "e2e.fast_flag": str(fast), "e2e.restore_ms": 1000,
                            "heron.connectors.file.sink.dir": str(out)})
    wanted = Counter()
    for i in range(RECORDS):
        wanted[record_key(i)] += SPOUT_TASKS
    try:
        run.start()
        placement = run.placement
        windows = placement.tasks["window"]
        homes = {placement.container_of[t] for t in windows}
        assert len(homes) == 2, f"the windowed bolt is not in both containers: {placement}"
        first = placement.container_of[windows[0]]
        other = next(s for s in placement.stmgrs if s != first)
        pids = run.working_dir / "pids"
        victims = [("the windowed bolt's instance", pids / f"container_{first.split('-')[1]}"
                    f"_window_{windows[0]}.pid"),
                   ("the Stream Manager", pids / f"{other}.pid")]
        assert wait_until(lambda: count(run, "__checkpoints-completed") >= 1, 60), \
            "no checkpoint completed\n" + log_warnings_of(run)
        for what, pid_file in victims:
            proc = wait_until(lambda: read_pid_file(pid_file), 30)
            assert proc is not None, f"no {what} to kill ({pid_file.name})"
            restores = count(run, "__restores")
            os.kill(proc.pid, signal.SIGKILL)
            assert wait_until(lambda: count(run, "__restores") > restores, 60), \
                f"no rollback after killing {what}\n" + log_warnings_of(run)
            done = count(run, "__checkpoints-completed")
            assert wait_until(lambda: count(run, "__checkpoints-completed") > done, 60), \
                f"no checkpoint completed after killing {what}\n" + log_warnings_of(run)
        restore_log = json.loads(figures(run)["__restore-log"])  # oldest first
        total = sum(wanted.values())
        assert sum(summed(out).values()) < total - 2_000, \
            "the stream nearly ended before the kills were done: make it longer"
        fast.touch()
        last = [-1, 0]

        def settled() -> bool:
            """Every record's count flushed and committed, or nothing new for 10 s."""
            n = sum(summed(out).values())
            if n != last[0]:
                last[:] = [n, 0]
            last[1] += 1
            return n >= total or last[1] > 50
        assert wait_until(settled, 90), "the stream never finished"
        done = count(run, "__checkpoints-completed")  # anything committed late counts too
        wait_until(lambda: count(run, "__checkpoints-completed") >= done + 2, 10)
    finally:
        fast.touch()
        run.close()
    rows = flushed(out)
    got = summed(out)
    assert got == wanted, (f"per key, lost: {dict(wanted - got)}, counted twice: "
                           f"{dict(got - wanted)}; restores: {restore_log}")
    windows_twice = [k for k, n in Counter((t, w, key) for t, w, key, _ in rows).items()
                     if n > 1]
    assert not windows_twice, f"windows committed twice: {windows_twice[:10]}"
    # the start, then a rollback per kill, each to a checkpoint (windows restored)
    rollbacks = restore_log[1:]
    assert len(rollbacks) >= 2 and all(checkpoint for _, checkpoint in rollbacks), \
        restore_log
    assert run.alive() == []


def log_warnings_of(run: HeronRun) -> str:
    return log_warnings(SimpleNamespace(log_dir=run.log_dir))
