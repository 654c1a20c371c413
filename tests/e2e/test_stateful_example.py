"""The stateful word count example (examples/stateful_wordcount), run as a user runs it.

A streamparse project (``from streamparse import Topology, Grouping, Bolt``) that puts
the shipped connectors around streamparse bolts: FileSpout over the text shipped with
the example, a stateful streamparse bolt keeping a running count per word in keyed
state, and FileSink. ``heron run --time 0`` runs it until the text is read to the end;
the committed output must hold each word's running counts 1..n exactly once, n being the
word's count in the text as Python counts it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from compat.connectors import read_committed

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "stateful_wordcount"
pytestmark = pytest.mark.timeout(240)


def copy_example(tmp_path: Path) -> Path:
    """The project in tmp_path, so its logs, checkpoints and output stay out of the repo."""
    project = tmp_path / "stateful_wordcount"
    shutil.copytree(EXAMPLE, project,
                    ignore=shutil.ignore_patterns("logs", "output", "checkpoints", "__pycache__"))
    return project


def output_dir(project: Path, engine: str, summary: dict) -> Path:
    """Where config.json's relative ``heron.connectors.file.sink.dir: output`` lands: the
    task's working directory, which on the heron engine is the run's own directory
    (the parent of its logs/) and on the storm engine the directory heron run started in."""
    if engine == "heron":
        return Path(summary["log_dir"]).parent / "output"
    return project / "output"


@pytest.mark.parametrize("engine", ["heron", "storm"])
def test_committed_counts_equal_the_text_counted_in_python(tmp_path, engine):
    project = copy_example(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "engine.tools.cli.main", "run", str(project), "--engine", engine,
         "--time", "0", "--json"],
        capture_output=True, text=True, timeout=200, cwd=project)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["reason"] == "finished", summary
    assert summary["checkpoints"]["completed"] >= 1

    words = (project / "data" / "corpus.txt").read_text(encoding="utf-8").split()
    expected = Counter(words)
    assert len(words) > 5_000 and len(expected) > 40

    committed = [tuple(json.loads(line))
                 for line in read_committed(output_dir(project, engine, summary))]
    final: dict[str, int] = {}
    for word, count in committed:
        final[word] = max(final.get(word, 0), count)
    assert final == dict(expected)
    # exactly once: every running count of every word once, none twice, none missing
    assert Counter(committed) == Counter(
        (word, count) for word, total in expected.items() for count in range(1, total + 1))
    components = summary["components"]
    assert components["lines"]["emitted"] == len(expected_lines(project))
    assert components["sink"]["tasks"] == 2 and components["count"]["tasks"] == 2


def expected_lines(project: Path) -> list[str]:
    return (project / "data" / "corpus.txt").read_text(encoding="utf-8").splitlines()
