"""Running a streamlet topology of tests/heronpy/examples/topologies with ``heron run`` (as
tests/heronpy/test_examples_run.py does) and reading what it produced: the capture of
stages nobody consumes, and the component logs (``log()``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.heronpy.cli_runs import REPO, heron_run

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
    log_dir = tmp_path / f"logs-{engine}"
    summary, records, _ = heron_run(
        [str(TOPOLOGIES / f"{topology}.py"), "--engine", engine, "-t", str(seconds)],
        tmp_path / f"{topology}-{engine}.jsonl", log_dir, env=env)
    return StreamletRun(summary, records, log_dir)
