"""A temporary HERON_HOME, stand-ins for the engine's processes, and a sweeper that
kills and reaps whatever a test's topologies left (the detached scheduler is a child of
the test process when the CLI runs in it)."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from engine.tools.cli.main import main

STANDINS = ("tmanager=engine.common.process.standin,stmgr=engine.common.process.standin,"
            "metricsmgr=engine.common.process.standin,instance=engine.common.process.standin")


@pytest.fixture
def heron_home(tmp_path: Path, monkeypatch) -> Path:
    home = tmp_path / "heron-home"
    monkeypatch.setenv("HERON_HOME", str(home))
    monkeypatch.setenv("HERON_MODULE_OVERRIDES", STANDINS)
    return home


@pytest.fixture
def real_engine(heron_home, monkeypatch):
    """The CLI fixtures' HERON_HOME, but with the real processes instead of stand-ins."""
    monkeypatch.delenv("HERON_MODULE_OVERRIDES", raising=False)
    return heron_home


def heron(*args: str):
    """Run the ``heron`` CLI in this process, as a user would type it."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def processes_under(home: Path) -> list[psutil.Process]:
    needle = str(home)
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if needle in " ".join(proc.info["cmdline"] or ()):
                found.append(proc)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def sweep(heron_home):
    """After the test: fail if processes of its topologies still run; kill and reap them
    and any exited child of this process (a detached scheduler that finished)."""
    before = {p.pid for p in psutil.Process().children()}
    yield
    leftovers = [p for p in processes_under(heron_home)
                 if p.status() != psutil.STATUS_ZOMBIE]
    for proc in leftovers:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(leftovers, timeout=5)
    for child in psutil.Process().children():
        if child.pid not in before:
            try:
                child.kill()
                child.wait(5)
            except psutil.Error:
                pass
    assert not leftovers, f"processes left running: {[p.pid for p in leftovers]}"


@pytest.fixture
def live_processes(heron_home):
    """A function listing the live (non-zombie) processes of the home's topologies."""
    def live() -> list[psutil.Process]:
        out = []
        for proc in processes_under(heron_home):
            try:
                if proc.status() != psutil.STATUS_ZOMBIE:
                    out.append(proc)
            except psutil.Error:
                pass
        return out
    return live
