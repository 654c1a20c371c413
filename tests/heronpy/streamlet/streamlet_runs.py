"""Running a streamlet topology of tests/heronpy/examples/topologies with ``heron run`` (as
tests/heronpy/test_examples_run.py does) and reading what it produced: the capture of
stages nobody consumes, and the component logs (``log()``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TOPOLOGIES = REPO / "tests" / "heronpy" / "examples" / "topologies"


@dataclass
class StreamletRun:
    summary: dict
    records: list[dict]
    log_dir: Path

    def values(self, component: str) -> list:
        """The element of each tuple the stage emitted (its one ``output`` field)."""
        return [r["values"][0] for r in self.records
                if (r["component"], r["stream"]) == (component, "output")]

    def tasks(self, component: str) -> list[tuple[int, object]]:
        return [(r["task"], r["values"][0]) for r in self.records
                if (r["component"], r["stream"]) == (component, "output")]

    def logged(self, component: str) -> list[str]:
        """The messages a stage's tasks logged at INFO (``log()`` writes one per element)."""
        lines = []
        for path in sorted(self.log_dir.rglob(f"*{component}_*.log")):
            for line in path.read_text(errors="replace").splitlines():
                if " - INFO - " in line:
                    lines.append(line.split(" - INFO - ", 1)[1])
        return lines


def run_streamlet(topology: str, engine: str, seconds: float, tmp_path: Path,
                  env: dict | None = None) -> StreamletRun:
    """``heron run`` the topology file with this checkout's code; fails on any restart."""
    capture = tmp_path / f"{topology}-{engine}.jsonl"
    log_dir = tmp_path / f"logs-{engine}"
    proc = subprocess.run(
        [sys.executable, "-m", "engine.cli.main", "run", str(TOPOLOGIES / f"{topology}.py"),
         "--engine", engine, "-t", str(seconds), "--json", "--capture", str(capture),
         "--log-dir", str(log_dir)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert summary["error"] is None, summary
    for name, stats in summary["components"].items():
        assert (stats["restarts"], stats["last_error"]) == (0, ""), (name, stats)
    records = [json.loads(line) for line in capture.read_text().splitlines()]
    return StreamletRun(summary, records, log_dir)
