"""The supervisor: start, restarts under the backoff policy (never given up), explicit
restart, staged stop of whole process groups, no zombies."""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from engine.common.process import ProcessSpec, RestartPolicy, Supervisor, SupervisorEvent

pytestmark = pytest.mark.timeout(60)

SLEEPER = [sys.executable, "-c",
           "from engine.common.process import die_with_parent; die_with_parent(); "
           "import time; time.sleep(60)"]


def wait_for(cond, timeout=10.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(interval)
    return cond()


def no_zombie_children() -> bool:
    return all(p.status() != psutil.STATUS_ZOMBIE for p in psutil.Process().children())


@pytest.fixture
def events():
    got: list[SupervisorEvent] = []
    return got


def test_starts_all_with_logs_pid_files_and_own_sessions(tmp_path: Path, events):
    specs = [ProcessSpec(f"p{i}", SLEEPER, tmp_path / "logs" / f"p{i}.log") for i in range(2)]
    sup = Supervisor(specs, RestartPolicy(initial_ms=100), on_event=events.append,
                     pid_dir=tmp_path / "pids")
    sup.start()
    try:
        pids = sup.pids()
        assert set(pids) == {"p0", "p1"}
        for name, pid in pids.items():
            assert (tmp_path / "pids" / f"{name}.pid").read_text().split()[0] == str(pid)
            assert (tmp_path / "logs" / f"{name}.log").exists()
            assert os.getsid(pid) == pid  # its own session
            # between fork and exec the child still has this process's environment
            proc = psutil.Process(pid)
            deadline = time.monotonic() + 10
            while proc.cmdline() != list(SLEEPER) and time.monotonic() < deadline:
                time.sleep(0.05)
            env = proc.environ()
            assert env["HERON_PARENT_PID"] == str(os.getpid())
        assert [e.kind for e in events] == ["started", "started"]
    finally:
        sup.stop(grace=2)
    assert sup.pids() == {}
    assert not list((tmp_path / "pids").glob("*.pid"))
    assert no_zombie_children()
    sup.stop()  # idempotent


#: a process that counts its runs in a file; runs listed in PROGRESS leave the progress
#: marker before exiting, runs up to EXITS exit with status 3, later ones keep running
COUNTING = """
import os, sys, time
from pathlib import Path
runs = Path(sys.argv[1])
n = int(runs.read_text()) + 1 if runs.exists() else 1
runs.write_text(str(n))
if n in {progress}:
    Path(os.environ["HERON_PROGRESS_FILE"]).touch()
if n <= {exits}:
    sys.exit(3)
time.sleep(60)
"""


def test_restart_records_follow_the_backoff_sequence_then_reset_on_progress(tmp_path: Path,
                                                                           events, caplog):
    """Exits with no progress wait initial, doubling; the third makes the process
    crash-looping (still restarted); an exit after progress restarts at once and resets
    the sequence; nothing is ever given up."""
    caplog.set_level(logging.WARNING, logger="heron.process")
    script = COUNTING.format(progress="{5}", exits=6)
    policy = RestartPolicy(initial_ms=50, max_ms=10_000)
    sup = Supervisor([ProcessSpec("flaky", [sys.executable, "-c", script, str(tmp_path / "runs")],
                                  tmp_path / "flaky.log")], policy, on_event=events.append,
                     pid_dir=tmp_path / "pids", status_dir=tmp_path / "status")
    sup.start()
    try:
        assert wait_for(lambda: len(sup.records) == 6, 20)
        records = list(sup.records)
        assert [r.delay_ms for r in records] == [*policy.sequence(4), 0, policy.sequence(1)[0]]
        assert [r.progressed for r in records] == [False] * 4 + [True, False]
        assert [r.attempt for r in records] == [1, 2, 3, 4, 5, 6]
        assert [r.crash_looping for r in records] == [False, False, True, True, False, False]
        assert all(r.name == "flaky" and r.reason == "exited with status 3" for r in records)
        kinds = [e.kind for e in events]
        assert kinds.count("crash_looping") == 1 and "gave_up" not in kinds
        assert wait_for(lambda: sup.pid("flaky") is not None)  # run 7 keeps running
        assert sup.restarts("flaky") == 6 and sup.crash_looping() == {}
        status = json.loads((tmp_path / "status" / "flaky.json").read_text())
        assert status["attempts"] == 6 and status["crash_looping"] is False
        assert [r["delay_ms"] for r in status["records"]] == [r.delay_ms for r in records]
    finally:
        sup.stop(grace=1)
    assert no_zombie_children()


def test_a_process_that_never_progresses_is_crash_looping_and_still_restarted(tmp_path: Path,
                                                                              events):
    script = COUNTING.format(progress="set()", exits=1000)
    sup = Supervisor([ProcessSpec("bad", [sys.executable, "-c", script, str(tmp_path / "runs")],
                                  tmp_path / "bad.log")], RestartPolicy(initial_ms=20, max_ms=40),
                     on_event=events.append, pid_dir=tmp_path / "pids",
                     status_dir=tmp_path / "status")
    sup.start()
    try:
        assert wait_for(lambda: len(sup.records) >= 5, 20)
        assert sup.crash_looping() == {"bad": "exited with status 3"}
        assert [r.delay_ms for r in list(sup.records)[:5]] == [20, 40, 40, 40, 40]
        status = json.loads((tmp_path / "status" / "bad.json").read_text())
        assert status["crash_looping"] is True and status["last_error"] == "exited with status 3"
    finally:
        sup.stop(grace=1)
    assert no_zombie_children()


def test_restart_after_interval_keeps_others_running(tmp_path: Path, events):
    specs = [ProcessSpec("steady", SLEEPER, tmp_path / "steady.log"),
             ProcessSpec("victim", SLEEPER, tmp_path / "victim.log")]
    sup = Supervisor(specs, RestartPolicy(initial_ms=300), on_event=events.append)
    sup.start()
    try:
        steady, victim = sup.pid("steady"), sup.pid("victim")
        psutil.Process(victim).kill()
        assert wait_for(lambda: sup.pid("victim") not in (None, victim))
        assert sup.pid("steady") == steady
        assert sup.restarts("victim") == 1
        assert not psutil.pid_exists(victim)  # reaped, not a zombie
    finally:
        sup.stop(grace=1)


def test_explicit_restart_does_not_use_the_policy(tmp_path: Path):
    sup = Supervisor([ProcessSpec("p", SLEEPER, tmp_path / "p.log")])
    sup.start()
    try:
        first = sup.pid("p")
        sup.restart("p", grace=2)
        second = sup.pid("p")
        assert second and second != first
        assert not psutil.pid_exists(first)
        assert sup.restarts("p") == 0 and not sup.records
        with pytest.raises(KeyError):
            sup.restart("nope")
    finally:
        sup.stop(grace=1)


def test_stop_kills_grandchildren_and_stubborn_groups(tmp_path: Path):
    gc_file = tmp_path / "gc.pid"
    # The leader ignores SIGTERM (and so does its background grandchild).
    stubborn = ["sh", "-c", f"trap '' TERM; sleep 60 & echo $! > {gc_file}; wait"]
    # The leader exits on SIGTERM but leaves a grandchild that ignores it.
    polite_gc = tmp_path / "polite_gc.pid"
    polite = [sys.executable, "-c",
              "import subprocess, signal, sys, time\n"
              "p = subprocess.Popen(['sh', '-c', \"trap '' TERM; exec sleep 60\"])\n"
              f"open({str(polite_gc)!r}, 'w').write(str(p.pid))\n"
              "signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\n"
              "time.sleep(60)\n"]
    order: list[str] = []
    sup = Supervisor([ProcessSpec("stubborn", stubborn, tmp_path / "s.log"),
                      ProcessSpec("polite", polite, tmp_path / "p.log")],
                     on_event=lambda e: order.append(e.name) if e.kind == "stopped" else None)
    sup.start()
    assert wait_for(lambda: gc_file.exists() and gc_file.read_text().strip()
                    and polite_gc.exists() and polite_gc.read_text().strip())
    grandchildren = [int(gc_file.read_text()), int(polite_gc.read_text())]
    leaders = list(sup.pids().values())
    started = time.monotonic()
    sup.stop(grace=1.0, stages=[["polite"], ["stubborn"]])
    assert time.monotonic() - started < 5
    assert order == ["polite", "stubborn"]
    for pid in grandchildren + leaders:
        assert wait_for(lambda: not psutil.pid_exists(pid)
                        or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, 5), pid
    assert no_zombie_children()


def test_spawn_failure_follows_the_policy(tmp_path: Path, events):
    sup = Supervisor([ProcessSpec("ghost", ["/nonexistent/binary"], tmp_path / "g.log")],
                     RestartPolicy(initial_ms=20, max_ms=40), on_event=events.append)
    sup.start()
    try:
        assert wait_for(lambda: "ghost" in sup.crash_looping(), 5)
        kinds = [e.kind for e in events]
        assert kinds[:4] == ["exited", "exited", "exited", "crash_looping"]
        assert "could not be started" in sup.crash_looping()["ghost"]
    finally:
        sup.stop(grace=0.5)


def test_children_survive_the_thread_that_called_start(tmp_path: Path):
    """PR_SET_PDEATHSIG fires when the forking *thread* exits: spawning must happen on
    the supervisor's own thread, not on the caller's."""
    sup = Supervisor([ProcessSpec("p", SLEEPER, tmp_path / "p.log")])
    t = threading.Thread(target=sup.start)
    t.start()
    t.join()
    try:
        pid = sup.pid("p")
        time.sleep(1.0)
        assert sup.pid("p") == pid and sup.restarts("p") == 0
    finally:
        sup.stop(grace=1)


def test_add_and_remove_processes(tmp_path: Path, events):
    sup = Supervisor([ProcessSpec("a", SLEEPER, tmp_path / "a.log")], on_event=events.append,
                     pid_dir=tmp_path)
    sup.start()
    try:
        sup.add(ProcessSpec("b", SLEEPER, tmp_path / "b.log"))
        b = sup.pid("b")
        assert b and (tmp_path / "b.pid").exists()
        with pytest.raises(ValueError):
            sup.add(ProcessSpec("b", SLEEPER, tmp_path / "b.log"))
        sup.remove("a", grace=1)
        assert sup.names == ["b"] and not (tmp_path / "a.pid").exists()
        assert [e.kind for e in events] == ["started", "started", "stopped"]
    finally:
        sup.stop(grace=1)
    assert not psutil.pid_exists(b)


def test_processes_a_killed_predecessor_left_running_are_stopped_before_the_new_ones_start(
        tmp_path: Path, caplog, monkeypatch):
    """An executor killed with SIGKILL cannot stop its children; the next one must not
    start a second copy beside them (a Stream Manager would keep hearing the old one)."""
    import subprocess

    from engine.common.process import supervisor
    from engine.common.process.spawn import write_pid_file

    monkeypatch.setattr(supervisor, "LEFTOVER_GRACE_SECS", 1.0)
    pids = tmp_path / "pids"
    # a stubborn leftover, in its own session as the supervisor's children are
    stubborn = [sys.executable, "-c",
                "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "time.sleep(60)"]
    leftover = subprocess.Popen(stubborn, start_new_session=True)
    try:
        write_pid_file(pids / "p0.pid", leftover.pid)
        # a pid file whose pid was reused by an unrelated process is left alone
        bystander = subprocess.Popen(SLEEPER[:2] + ["import time; time.sleep(60)"],
                                     start_new_session=True)
        (pids / "p1.pid").write_text(f"{bystander.pid}\n1.0\n")
        specs = [ProcessSpec(f"p{i}", SLEEPER, tmp_path / "logs" / f"p{i}.log")
                 for i in range(2)]
        sup = Supervisor(specs, RestartPolicy(initial_ms=100), pid_dir=pids)
        caplog.set_level(logging.WARNING, logger="heron.process.supervisor")
        sup.start()
        try:
            assert leftover.poll() is not None, "the leftover still runs beside its successor"
            assert bystander.poll() is None, "a reused pid was killed"
            assert sup.pid("p0") not in (None, leftover.pid)
            assert (pids / "p0.pid").read_text().split()[0] == str(sup.pid("p0"))
            assert f"p0 (pid {leftover.pid})" in caplog.text
            assert f"pid {bystander.pid}" not in caplog.text
        finally:
            sup.stop(grace=2)
        bystander.kill()
        bystander.wait(5)
    finally:
        leftover.kill()
        leftover.wait(5)
