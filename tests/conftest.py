"""Suite-wide fixtures: import isolation for projects, and a check that no test leaves
child processes behind."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def isolated_imports():
    """Undo sys.path and sys.modules changes, so two projects with the same module names
    (``spouts.words``...) can be loaded one after the other in one test process."""
    saved_path = list(sys.path)
    saved_modules = set(sys.modules)
    yield
    sys.path[:] = saved_path
    for name in set(sys.modules) - saved_modules:
        del sys.modules[name]


@pytest.fixture(autouse=True)
def no_orphan_processes():
    """Fail a test that leaves a child process running (and kill it)."""
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    yield
    leftover = [p for p in me.children(recursive=True) if p.pid not in before]
    if not leftover:
        return
    for p in leftover:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(leftover, timeout=5)
    names = ", ".join(f"{p.pid}" for p in leftover)
    pytest.fail(f"test left child processes running: {names}")
