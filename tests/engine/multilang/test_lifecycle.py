"""Processes start isolated and never outlive their host, or us.

Parent death is covered by two mechanisms (see ``multilang.launch``): the
stdin EOF pystorm exits on, and the kernel's parent-death signal for a
child stuck in user code.  Both are pinned here, along with ``close()``.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from engine.common.multilang.launch import shell_argv, spawn

REPO = Path(__file__).resolve().parents[4]


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_script_is_one_argument_as_storm_passes_it():
    assert shell_argv("streamparse_run", "-s json bolts.Split") == [
        "streamparse_run",
        "-s json bolts.Split",
    ]
    assert shell_argv("node", "") == ["node"]


def test_command_with_spaces_is_split_when_it_is_not_an_executable():
    assert shell_argv("python -m compat.storm_api.run", "bolts.Split") == [
        "python", "-m", "compat.storm_api.run", "bolts.Split"]


@pytest.mark.timeout(30)
def test_child_runs_in_its_own_session(tmp_path):
    popen = spawn(["sleep", "30"], tmp_path)
    try:
        assert os.getsid(popen.pid) == popen.pid != os.getsid(0)
    finally:
        popen.kill()
        popen.wait(10)
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            stream.close()


@pytest.mark.timeout(30)
def test_close_ends_the_process_with_an_orderly_stdin_eof(start):
    host = start("bolt", "streamparse_run", "bolts.SplitBolt")
    pid = host.pid
    started = time.monotonic()
    host.close()
    assert time.monotonic() - started < 3.0
    assert gone(pid)
    assert host.process.popen.returncode == 2  # pystorm's exit status on stdin EOF
    host.close()  # idempotent


@pytest.mark.timeout(30)
def test_close_removes_the_pid_dir(start, collector, wait_until):
    host = start("bolt", "bash", "echo.sh")
    handshake = json.loads(wait_until(lambda: collector.logs(), poll=host.poll)[0][0])
    pid_dir = Path(handshake["pidDir"])
    assert (pid_dir / str(host.pid)).is_file()
    host.close()
    assert not pid_dir.exists()


@pytest.mark.timeout(30)
def test_close_kills_a_process_that_ignores_eof_and_sigterm(start):
    host = start("bolt", "bash", "stubborn.sh")
    children = psutil.Process(host.pid).children(recursive=True)
    started = time.monotonic()
    host.close()
    assert time.monotonic() - started < 6.0
    assert host.process.popen.returncode == -signal.SIGKILL
    assert all(gone(c.pid) for c in children)


@pytest.mark.timeout(30)
def test_close_takes_the_process_group_with_it(start, wait_until):
    host = start("bolt", "bash", "hang.sh")
    helper = wait_until(lambda: psutil.Process(host.pid).children())[0]  # the script's sleep
    host.close()
    assert gone(host.pid) and gone(helper.pid)


@pytest.mark.timeout(30)
def test_close_of_a_spout_stops_its_process(start):
    host = start("spout", "streamparse_run", "spouts.CountSpout")
    host.next_tuple()
    host.close()
    assert gone(host.pid)


@pytest.mark.timeout(30)
def test_process_outlives_the_short_lived_thread_that_started_it(start, collector, wait_until):
    """The kernel's parent-death signal follows the forking thread, not the process."""
    hosts = []
    creator = threading.Thread(target=lambda: hosts.append(start("bolt", "bash", "bolt.sh")))
    creator.start()
    creator.join(20)
    host = hosts[0]
    time.sleep(0.3)
    host.execute(host.make_tuple("1", "src", "default", 1, ["x"]))
    wait_until(lambda: collector.of("ack"), poll=host.poll)
    assert not gone(host.pid)


@pytest.mark.timeout(30)
def test_pystorm_component_exits_with_status_2_when_its_stdin_closes(components):
    """Mechanism 1 of parent death: when we die the kernel closes the pipe."""
    popen = subprocess.Popen(
        ["streamparse_run", "spouts.CountSpout"],
        cwd=components,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        setup = {
            "conf": {},
            "pidDir": str(components),
            "context": {"taskid": 1, "componentid": "c"},
        }
        popen.stdin.write(json.dumps(setup).encode() + b"\nend\n")
        popen.stdin.flush()
        assert b'"pid"' in popen.stdout.readline()
        popen.stdin.close()
        assert popen.wait(10) == 2
    finally:
        if popen.poll() is None:
            popen.kill()
        popen.wait(10)
        popen.stdout.close()
        (components / str(popen.pid)).unlink(missing_ok=True)


PARENT = textwrap.dedent("""
    import logging, sys, time
    from engine.common.multilang import host_shell_component

    class Collector:
        def __getattr__(self, name):
            return lambda *args: [1]

    ctx = {"taskid": 1, "componentid": "sleepy",
           "source->stream->fields": {"src": {"default": ["line"]}}}
    host = host_shell_component("bolt", "streamparse_run", "bolts.SleepyBolt", {}, ctx, Collector(),
                                logging.getLogger("parent"), cwd=sys.argv[1])
    host.execute(host.make_tuple("1", "src", "default", 1, ["zzz"]))
    print(host.pid, flush=True)
    time.sleep(60)
""")


@pytest.mark.timeout(40)
def test_child_busy_in_user_code_dies_with_its_parent(components, tmp_path):
    """Mechanism 2: the child never reads stdin again, so only the signal can stop it."""
    # The killed parent cannot remove its pid dir: keep it under tmp_path.
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(components)], cwd=REPO, stdout=subprocess.PIPE, env=env
    )
    child = None
    try:
        child = int(parent.stdout.readline())
        time.sleep(0.5)  # the bolt is now inside time.sleep(60)
        assert not gone(child)
        parent.kill()
        parent.wait(10)
        deadline = time.monotonic() + 10
        while not gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gone(child)
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait(10)
        parent.stdout.close()
        if child is not None and not gone(child):
            os.kill(child, signal.SIGKILL)
