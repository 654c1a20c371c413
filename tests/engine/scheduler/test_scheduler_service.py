"""The scheduler service (``python -m engine.scheduler``): location, requests, kill,
SIGTERM, and no orphans when it is SIGKILLed."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import psutil
import pytest
import zmq

from engine.common.network import request
from engine.common.security.guard import SocketSecurity
from engine.messages import common_pb2, scheduler_pb2
from engine.statemgr import LocalFileSystemStateManager

pytestmark = pytest.mark.timeout(120)


def wait_for(cond, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def start_service(spec) -> subprocess.Popen:
    log = open(spec.log_dir / "scheduler.log", "ab")
    try:
        return subprocess.Popen([sys.executable, "-m", "engine.scheduler", "--launch",
                                 str(spec.path)], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    finally:
        log.close()


def location(spec):
    sm = LocalFileSystemStateManager(spec.state.root)
    try:
        return sm.get("schedulers", spec.topology_name)
    finally:
        sm.close()


def wait_location(spec, proc):
    assert wait_for(lambda: location(spec) is not None or proc.poll() is not None), \
        "the scheduler did not record its location"
    assert proc.poll() is None, (spec.log_dir / "scheduler.log").read_text()
    return location(spec)


def test_service_serves_restart_and_kill(launch_spec, sweep, topology_processes):
    proc = start_service(launch_spec)
    try:
        loc = wait_location(launch_spec, proc)
        assert loc.topology_name == "wc"
        assert loc.http_endpoint.startswith("tcp://127.0.0.1:")
        assert loc.job_page_link[0].startswith("file://")
        # the supervisor and its service, 3 executors, 1 + 8 of the topology's processes
        assert wait_for(lambda: len(topology_processes()) == 2 + 3 + 1 + 8)
        security = SocketSecurity.for_launch(launch_spec)

        # Malformed input from a client holding the keys is dropped; the service keeps
        # answering. (Clients without them never get a frame in: tests/engine/security.)
        ctx = zmq.Context()
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        security.client(sock)
        sock.connect(loc.http_endpoint)
        sock.send_multipart([b"not.a.Type", b"\x00garbage"])
        sock.send_multipart([b"one frame"])
        time.sleep(0.3)
        sock.close()
        ctx.term()

        ok = request(loc.http_endpoint, scheduler_pb2.RestartTopologyRequest(
            topology_name="wc", container_index=2), timeout=30, security=security)
        assert ok.status.status == common_pb2.OK, ok.status.message
        bad = request(loc.http_endpoint, scheduler_pb2.RestartTopologyRequest(
            topology_name="wc", container_index=9), timeout=30, security=security)
        assert bad.status.status == common_pb2.NOTOK and "no container 9" in bad.status.message
        wrong = request(loc.http_endpoint, scheduler_pb2.KillTopologyRequest(topology_name="other"),
                        timeout=30, security=security)
        assert wrong.status.status == common_pb2.INVALID_TOPOLOGY_NAME
        # a kill that names no topology used to kill whatever the service ran
        empty = request(loc.http_endpoint, scheduler_pb2.KillTopologyRequest(), timeout=30,
                        security=security)
        assert empty.status.status == common_pb2.INVALID_TOPOLOGY_NAME
        assert "names no topology" in empty.status.message
        assert proc.poll() is None  # (container 2 may still be coming back from its restart)
        assert wait_for(lambda: len(topology_processes()) == 14)

        done = request(loc.http_endpoint, scheduler_pb2.KillTopologyRequest(topology_name="wc"),
                       timeout=60, security=security)
        assert done.status.status == common_pb2.OK
        assert proc.wait(15) == 0
        assert wait_for(lambda: topology_processes() == [], 10)
        log = (launch_spec.log_dir / "scheduler.log").read_text()
        assert "malformed message" in log
        sm = LocalFileSystemStateManager(launch_spec.state.root)
        assert sm.topologies() == [] and sm.get("schedulers", "wc") is None
        sm.close()
    finally:
        proc.kill()
        proc.wait()


def test_sigterm_kills_the_topology(launch_spec, sweep, topology_processes):
    proc = start_service(launch_spec)
    try:
        wait_location(launch_spec, proc)
        assert wait_for(lambda: len(topology_processes()) == 14)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert wait_for(lambda: topology_processes() == [], 10)
        sm = LocalFileSystemStateManager(launch_spec.state.root)
        assert sm.topologies() == []
        sm.close()
    finally:
        proc.kill()
        proc.wait()


def test_sigkill_leaves_no_orphans(launch_spec, sweep, topology_processes):
    proc = start_service(launch_spec)
    try:
        wait_location(launch_spec, proc)
        assert wait_for(lambda: len(topology_processes()) == 14)
        everything = [p.pid for p in topology_processes()]
        proc.kill()
        proc.wait()
        assert wait_for(lambda: not any(psutil.pid_exists(p) for p in everything), 15), \
            [p.pid for p in topology_processes()]
        # its ephemeral location went with it
        assert location(launch_spec) is None
    finally:
        proc.kill()
        proc.wait()
