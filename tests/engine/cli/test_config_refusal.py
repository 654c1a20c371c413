"""``heron submit`` and ``heron run`` refuse a runtime value no role could use, before
anything starts: one line naming the key and the value, exit 2 (engine/common/plan/config_check.py).
Before, submit said "submitted", ``heron list`` showed RUNNING and the Topology Master
crash-looped with the traceback in its log only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.cli.conftest import heron

REPO = Path(__file__).resolve().parents[3]
WORDCOUNT = REPO / "examples" / "wordcount"


@pytest.mark.parametrize("command", ["submit", "run"])
@pytest.mark.parametrize("option", ["topology.stateful.checkpoint.interval.seconds=abc",
                                    "topology.reliability.mode=EXACTLY_ONCE",
                                    "topology.stateful.key.groups=abc"])
def test_submit_and_run_refuse_a_bad_value_before_anything_starts(heron_home, isolated_imports,
                                                                   command, option):
    args = ["submit", "local", str(WORDCOUNT)] if command == "submit" else [
        "run", str(WORDCOUNT), "--time", "5"]
    result = heron(*args, "-o", option, "-o", "topology.reliability.mode=EFFECTIVELY_ONCE"
                   if "reliability" not in option else option)
    assert result.exit_code == 2, result.output
    key, _, value = option.partition("=")
    assert result.output.startswith("heron: error: invalid config: ")
    assert key in result.output and value in result.output
    assert "submitted" not in result.output
    assert not (heron_home / "topologies").exists()
