"""The executor as a process, running stand-ins instead of the engine's processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from engine.common.launch import LaunchSpec

pytestmark = pytest.mark.timeout(90)


def wait_for(cond, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def start_executor(spec: LaunchSpec, container: int) -> subprocess.Popen:
    log = open(spec.process_log(f"executor-{container}"), "ab")
    try:
        return subprocess.Popen([sys.executable, "-m", "engine.executor", "--launch",
                                 str(spec.path), "--container", str(container)],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        log.close()


def live_children(proc: subprocess.Popen) -> dict[str, psutil.Process]:
    out = {}
    try:
        for child in psutil.Process(proc.pid).children():
            try:
                if child.status() != psutil.STATUS_ZOMBIE:
                    out[child.pid] = child
            except psutil.NoSuchProcess:
                pass
    except psutil.NoSuchProcess:
        pass
    return out


def pid_of(spec: LaunchSpec, name: str) -> int | None:
    try:
        return int((spec.pid_dir / f"{name}.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def all_gone(pids) -> bool:
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return False
        except psutil.NoSuchProcess:
            pass
    return True


def test_executor_starts_restarts_and_stops_its_container(launch_spec: LaunchSpec):
    ex = start_executor(launch_spec, 1)
    children: dict = {}
    try:
        names = ["stmgr-1", "metricsmgr-1", "container_1_word-spout_1", "container_1_count-bolt_3"]

        def started(name: str, times: int = 1) -> bool:
            # a stand-in logs its start line after installing its SIGTERM handler; before
            # that a SIGTERM kills it silently (seen on a loaded CI machine)
            try:
                return launch_spec.process_log(name).read_text().count("standin pid=") >= times
            except OSError:
                return False

        def all_running() -> bool:
            # each pid file is written just after its process starts: wait for both,
            # and for each process to be ready for a graceful stop
            kids = live_children(ex)
            return (len(kids) == 4 and all(pid_of(launch_spec, n) in kids for n in names)
                    and all(started(n) for n in names))
        assert wait_for(all_running), (f"container 1 should run 4 processes named by pid "
                                       f"files: {live_children(ex)}")
        children = live_children(ex)
        assert (launch_spec.log_dir / "container_1_count-bolt_3.log").exists()
        # An instance that dies is restarted by the executor.
        victim = pid_of(launch_spec, "container_1_count-bolt_3")
        os.kill(victim, signal.SIGKILL)
        assert wait_for(
            lambda: (
                pid_of(launch_spec, "container_1_count-bolt_3") not in (None, victim)
                and len(live_children(ex)) == 4
                and started("container_1_count-bolt_3", times=2)
            )
        )
        children = live_children(ex)
        ex.send_signal(signal.SIGTERM)
        assert ex.wait(15) == 0
        assert wait_for(lambda: all_gone(children), 5)
        log = launch_spec.process_log("executor-1").read_text()
        assert "restarted container_1_count-bolt_3" in log
        assert "standin stopping" in launch_spec.process_log("stmgr-1").read_text()
    finally:
        ex.kill()
        ex.wait()
        for p in children.values():
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass


def test_container_zero_and_sigkill_takes_the_container_down(launch_spec: LaunchSpec):
    ex = start_executor(launch_spec, 0)
    children: dict = {}
    try:
        assert wait_for(lambda: len(live_children(ex)) == 1)
        children = live_children(ex)
        assert pid_of(launch_spec, "heron-tmanager") in children
        ex.kill()
        ex.wait()
        # the death signal or, at worst, the parent watcher (polls every 0.5 s) ends it
        assert wait_for(lambda: all_gone(children), 15), "the TM outlived its executor"
    finally:
        ex.kill()
        ex.wait()
        for p in children.values():
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass


def test_executor_keeps_restarting_a_crash_looping_process_and_reports_it(
        launch_spec: LaunchSpec, monkeypatch):
    """Nothing is given up: every process exits at once (no progress), so each is
    restarted with backoff, becomes crash-looping after three exits in a row, and its
    status file says so; the executor itself keeps running."""
    import json

    monkeypatch.setenv("HERON_STANDIN_EXIT_AFTER", "0.05")
    launch_spec.restart_backoff_initial_ms = 50
    launch_spec.restart_backoff_max_ms = 100
    launch_spec.save()
    ex = start_executor(launch_spec, 2)
    status = launch_spec.restarts_dir / "stmgr-2.json"
    try:
        assert wait_for(lambda: status.exists()
                        and json.loads(status.read_text())["crash_looping"], 30)
        data = json.loads(status.read_text())
        assert data["last_error"] == "exited with status 3"
        assert [r["delay_ms"] for r in data["records"][:3]] == [50, 100, 100]
        assert ex.poll() is None
        assert "crash-looping" in launch_spec.process_log("executor-2").read_text()
    finally:
        ex.terminate()
        assert ex.wait(30) == 0


def test_executor_follows_a_new_packing_plan(launch_spec: LaunchSpec, plan):
    from engine.packing import ContainerPlan, InstancePlan, PackingPlan, Resource
    from engine.statemgr import LocalFileSystemStateManager

    ex = start_executor(launch_spec, 1)
    children: dict = {}
    try:
        assert wait_for(lambda: len(live_children(ex)) == 4)
        stmgr = pid_of(launch_spec, "stmgr-1")
        metrics = pid_of(launch_spec, "metricsmgr-1")
        spout = pid_of(launch_spec, "container_1_word-spout_1")
        r = Resource()
        repacked = PackingPlan(
            "wc-pack-2",
            [
                ContainerPlan(
                    1, [InstancePlan("word-spout", 1, 0, r), InstancePlan("count-bolt", 5, 2, r)]
                ),
                ContainerPlan(
                    2,
                    [
                        InstancePlan("word-spout", 2, 1, r),
                        InstancePlan("count-bolt", 3, 0, r),
                        InstancePlan("count-bolt", 4, 1, r),
                    ],
                ),
            ],
        )
        sm = LocalFileSystemStateManager(launch_spec.state.root)
        sm.set("packingplans", "wc", repacked.to_proto())
        sm.close()
        assert wait_for(lambda: pid_of(launch_spec, "container_1_count-bolt_5") is not None
                        and pid_of(launch_spec, "stmgr-1") not in (None, stmgr))
        assert wait_for(lambda: not (launch_spec.pid_dir / "container_1_count-bolt_3.pid").exists())
        assert pid_of(launch_spec, "metricsmgr-1") == metrics
        assert pid_of(launch_spec, "container_1_word-spout_1") == spout
        assert wait_for(lambda: len(live_children(ex)) == 4)
        children = live_children(ex)
        ex.send_signal(signal.SIGTERM)
        assert ex.wait(15) == 0
        assert wait_for(lambda: all_gone(children), 5)
    finally:
        ex.kill()
        ex.wait()
        for p in children.values():
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass


def test_a_superseded_container_stops_for_good(launch_spec: LaunchSpec):
    """When its Stream Manager is refused as superseded (the container runs again
    elsewhere), the executor stops every process of the container and exits 0: nothing is
    restarted, and a cluster manager sees the job end."""
    ex = start_executor(launch_spec, 1)
    children: dict = {}
    try:
        assert wait_for(lambda: len(live_children(ex)) >= 2)
        children = live_children(ex)
        launch_spec.superseded_marker.write_text("superseded: stmgr-1 incarnation 1 was "
                                                 "replaced by incarnation 2\n")
        assert ex.wait(20) == 0
        assert wait_for(lambda: all_gone(children), 15), "the container outlived its executor"
        log = launch_spec.process_log("executor-1").read_text()
        assert "was started again elsewhere" in log
    finally:
        if ex.poll() is None:
            ex.kill()
            ex.wait()
        for p in children.values():
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
