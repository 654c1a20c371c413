"""The existing tests of the code the tuple path serves (instances, Stream Manager,
groupings, the Storm API and its serializers, and the storm engine, whose tests lived under
tests/compat until it moved beside the heron engine) pass on the pure-Python path too. In
the main run they use the process's own selection: the compiled path where it is built
(``scripts/test.sh`` requires it), so together the two runs cover both paths."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
#: the multi-lang bridge (tests/engine/multilang) is not here: it speaks JSON or msgpack to
#: its subprocesses and never touches the tuple path
SUITES = ["tests/engine/instance", "tests/engine/stmgr", "tests/engine/grouping",
          "tests/compat", "tests/engine/storm"]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_instance_stmgr_grouping_and_storm_api_suites_pass_on_pure_python() -> None:
    env = {**os.environ, "HERON_PURE_PYTHON": "1"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                          *SUITES], cwd=REPO, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=850)
    assert run.returncode == 0, run.stdout[-5000:]
