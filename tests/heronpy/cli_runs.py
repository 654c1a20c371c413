"""``heron run ... --json --capture`` with this checkout's code, as the heronpy tests run
their topologies: the run's summary, its captured tuples and its stderr, after checking
that it ended without an error and that no component restarted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def heron_run(args: Sequence[str], capture: Path, log_dir: Path, *, timeout: float = 120,
              env: dict | None = None) -> tuple[dict, list[dict], str]:
    """Run ``heron run --json --capture CAPTURE --log-dir LOG_DIR ARGS``."""
    proc = subprocess.run(
        [sys.executable, "-m", "engine.tools.cli.main", "run", "--json", "--capture", str(capture),
         "--log-dir", str(log_dir), *args],
        cwd=REPO, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert summary["error"] is None, summary
    for name, stats in summary["components"].items():
        assert (stats["restarts"], stats["last_error"]) == (0, ""), (name, stats)
    records = [json.loads(line) for line in capture.read_text().splitlines()]
    return summary, records, proc.stderr
