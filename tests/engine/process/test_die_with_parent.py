"""die_with_parent: a child whose parent is SIGKILLed exits; a child whose recorded
parent is already gone exits at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.timeout(60)

PARENT = """
import sys, time
from pathlib import Path
from engine.common.process import ProcessSpec
from engine.common.process.spawn import spawn
child = spawn(ProcessSpec("child", [sys.executable, "-c",
    "from engine.common.process import die_with_parent; die_with_parent(); "
    "import time; time.sleep(60)"],
    Path(sys.argv[1]) / "child.log"))
print(child.pid, flush=True)
time.sleep(60)
"""


def _gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def test_child_exits_when_parent_is_sigkilled(tmp_path: Path):
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    child = None
    try:
        child = int(parent.stdout.readline())
        time.sleep(0.5)  # let the child reach die_with_parent
        assert psutil.pid_exists(child)
        parent.kill()
        parent.wait()
        assert _gone(child, 5), "child outlived its SIGKILLed parent"
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
        if child and psutil.pid_exists(child):
            os.kill(child, signal.SIGKILL)


def test_child_exits_at_once_when_parent_already_gone():
    env = dict(os.environ, HERON_PARENT_PID="1" if os.getpid() != 1 else "2")
    started = time.monotonic()
    code = subprocess.call([sys.executable, "-c",
                            "from engine.common.process import die_with_parent; die_with_parent(); "
                            "import time; time.sleep(30)"], env=env)
    assert code == 1
    assert time.monotonic() - started < 10
