"""Restarts on both engines (issue 18): a bolt that raises now and then restarts at once
after progress and the finite run finishes with every tuple executed; a spout that
fails in ``open`` every time is retried with backoff, never given up, and reported as
crash-looping (``heron run`` exits 1 naming it when ``--time`` ends)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from engine.tools.cli.main import main
from tests.e2e.heron.helpers import PROJECTS

pytestmark = pytest.mark.timeout(120)

FAULTY = PROJECTS / "faulty"
FAST_BACKOFF = ("-o", "heron.executor.restart.backoff.initial.ms=50",
                "-o", "heron.executor.restart.backoff.max.ms=200")


def heron_run(tmp_path, *args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["run", str(FAULTY), *args, "--json",
                                       "--log-dir", str(tmp_path / "logs")])
    start = result.output.find("{")
    assert start >= 0, result.output
    return result.exit_code, json.loads(result.output[start:])


@pytest.mark.parametrize("engine", ["storm", "heron"])
def test_a_bolt_raising_every_50th_tuple_finishes_with_every_tuple_executed(
        engine, tmp_path, isolated_imports):
    code, out = heron_run(tmp_path, "-n", "e2e_raising", "--engine", engine, "--time", "0",
                          "-o", "e2e.limit=1000", "-o", "e2e.every=50")
    assert code == 0 and out["reason"] == "finished", out
    raising = out["components"]["raising"]
    assert raising["executed"] == 1000
    assert raising["restarts"] == 20 and raising["crash_looping"] == 0
    assert raising["emitted"] == 980
    assert out["outputs"]["raising/default"]["count"] == 980


@pytest.mark.parametrize("engine", ["storm", "heron"])
def test_a_spout_failing_in_open_every_time_is_reported_crash_looping(engine, tmp_path,
                                                                       isolated_imports):
    code, out = heron_run(tmp_path, "-n", "e2e_never_opens", "--engine", engine,
                          "--time", "6" if engine == "heron" else "1", *FAST_BACKOFF)
    assert code == 1 and out["reason"] == "error", out
    assert "crash-looping" in out["error"] and "'never_opens'" in out["error"]
    assert "ConnectionError: e2e: never_opens cannot reach its source" in out["error"]
    spout = out["components"]["never_opens"]
    assert spout["crash_looping"] == 1 and spout["restarts"] >= 3
    assert spout["last_error"] == "ConnectionError: e2e: never_opens cannot reach its source"

