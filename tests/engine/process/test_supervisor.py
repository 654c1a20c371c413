"""The supervisor: start, bounded restarts, explicit restart, staged stop of whole
process groups, no zombies."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from engine.process import ProcessSpec, Supervisor, SupervisorEvent

pytestmark = pytest.mark.timeout(60)

SLEEPER = [sys.executable, "-c",
           "from engine.process import die_with_parent; die_with_parent(); "
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
    sup = Supervisor(specs, max_restarts=1, restart_interval=0.1, on_event=events.append,
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


def test_restarts_within_policy_then_gives_up(tmp_path: Path, events, caplog):
    caplog.set_level(logging.WARNING, logger="heron.process")
    flaky = [sys.executable, "-c", "import time, sys; time.sleep(0.2); sys.exit(3)"]
    sup = Supervisor([ProcessSpec("flaky", flaky, tmp_path / "flaky.log")], max_restarts=2,
                     restart_interval=0.1, on_event=events.append)
    sup.start()
    try:
        assert sup.failed.wait(10)
        kinds = [e.kind for e in events]
        assert kinds == ["started", "exited", "restarted", "exited", "restarted", "gave_up"]
        assert events[1].returncode == 3
        assert sup.restarts("flaky") == 2
        assert sup.gave_up() == ["flaky"]
        restart_lines = [r for r in caplog.records if "restarted flaky" in r.getMessage()]
        assert len(restart_lines) == 2
    finally:
        sup.stop(grace=1)
    assert no_zombie_children()


def test_restart_after_interval_keeps_others_running(tmp_path: Path, events):
    specs = [ProcessSpec("steady", SLEEPER, tmp_path / "steady.log"),
             ProcessSpec("victim", SLEEPER, tmp_path / "victim.log")]
    sup = Supervisor(specs, max_restarts=3, restart_interval=0.3, on_event=events.append)
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
    sup = Supervisor([ProcessSpec("p", SLEEPER, tmp_path / "p.log")], max_restarts=0)
    sup.start()
    try:
        first = sup.pid("p")
        sup.restart("p", grace=2)
        second = sup.pid("p")
        assert second and second != first
        assert not psutil.pid_exists(first)
        assert sup.restarts("p") == 0 and not sup.failed.is_set()
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
                     max_restarts=1, restart_interval=0.05, on_event=events.append)
    sup.start()
    try:
        assert sup.failed.wait(5)
        assert [e.kind for e in events] == ["exited", "gave_up"]
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
