"""``heron kill`` removes an effectively-once topology's checkpoints with the rest of its
state, and says so; ``--keep-checkpoints`` keeps them, and says where (real processes).
Before, 2.1 MB of checkpoints stayed under the checkpoint root of every killed
topology although the README said kill removes its state."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engine.statemgr import open_state_manager
from tests.e2e.heron.helpers import wait_until
from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(120)

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "stateful"
NAME = "keyed_wordcount"


@pytest.mark.parametrize("keep", [False, True])
def test_kill_removes_the_checkpoints_unless_asked_to_keep_them(real_engine, sweep,
                                                                 live_processes,
                                                                 isolated_imports, tmp_path,
                                                                 keep):
    sys.path.insert(0, str(PROJECT / "src"))
    root = tmp_path / "checkpoints"
    submitted = heron("submit", "local", str(PROJECT), "-n", NAME,
                      "-o", "e2e.sentences=100000", "-o", "e2e.pause_ms=20",
                      "-o", f"heron.connectors.file.sink.dir={tmp_path / 'out'}",
                      "-o", f"heron.statefulstorage.localfs.root.path={root}")
    assert submitted.exit_code == 0, submitted.output
    with open_state_manager("local", root=real_engine / "state") as state:
        assert wait_until(lambda: state.get("statefulcheckpoints", NAME), timeout=60)
    assert any((root / NAME).iterdir())
    killed = heron("kill", NAME, "--wait", "0", *(["--keep-checkpoints"] if keep else []))
    assert killed.exit_code == 0, killed.output
    said = " ".join(killed.output.split())
    if keep:
        assert f"kept the checkpoints of '{NAME}' in {root / NAME}" in said
        assert any((root / NAME).iterdir())
    else:
        assert f"removed the checkpoints of '{NAME}': {root / NAME}" in said
        assert not (root / NAME).exists()
    assert live_processes() == []
