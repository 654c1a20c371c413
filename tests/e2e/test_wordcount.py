"""The word-count example on the storm engine: exact counts, both import styles, CLI."""

from __future__ import annotations

import collections
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.common.submission import load_topology
from engine.storm import LocalCluster

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "wordcount"
pytestmark = pytest.mark.timeout(120)


def final_counts(result):
    cap = result.capture.streams[("count_bolt", "default")]
    return {key[0]: value for key, value in cap.latest.items()}, cap.count


def expected_counts(project: Path, seed: int, n: int) -> collections.Counter:
    sys.path.insert(0, str(project / "src"))
    from spouts.words import generate_words

    return collections.Counter(generate_words(seed, n))


def run_example(project: Path, tmp_path: Path, seed: int, n: int):
    loaded = load_topology(project, name="wordcount", cli_options={
        "wordcount.seed": seed, "wordcount.max_words": n})
    with LocalCluster(loaded.compiled, log_dir=tmp_path / "logs") as cluster:
        return cluster.run(time_limit=60)


def test_seeded_wordcount_with_streamparse_imports_equals_counter(tmp_path, isolated_imports):
    result = run_example(EXAMPLE, tmp_path, seed=11, n=20_000)
    assert result.reason == "finished"
    counts, emitted = final_counts(result)
    assert counts == expected_counts(EXAMPLE, 11, 20_000)
    assert emitted == 20_000
    spout = result.components["word_spout"]
    bolt = result.components["count_bolt"]
    assert (spout.emitted, bolt.executed, bolt.tasks) == (20_000, 20_000, 2)


def compat_copy(tmp_path: Path) -> Path:
    project = tmp_path / "wordcount_compat"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("logs", "__pycache__"))
    for path in project.rglob("*.py"):
        text = path.read_text()
        path.write_text(text.replace("from streamparse import", "from compat.storm_api import"))
    return project


def test_compat_imports_give_identical_counts(tmp_path, isolated_imports):
    project = compat_copy(tmp_path)
    assert "streamparse" not in (project / "src" / "bolts" / "wordcount.py").read_text()
    result = run_example(project, tmp_path, seed=11, n=20_000)
    assert result.reason == "finished"
    counts, _ = final_counts(result)
    assert counts == expected_counts(project, 11, 20_000)


def test_each_word_is_counted_by_exactly_one_task(tmp_path, isolated_imports):
    result = run_example(EXAMPLE, tmp_path, seed=3, n=5_000)
    # every task's log exists, named by component and task
    names = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert names == ["wordcount_count_bolt_2.log", "wordcount_count_bolt_3.log",
                     "wordcount_word_spout_4.log"]
    counts, emitted = final_counts(result)
    # running counts per word are 1..n without gaps only if one task owns each word
    assert emitted == sum(counts.values())


def test_cli_runs_the_example_and_prints_top_counts(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "engine.tools.cli.main", "run", str(EXAMPLE), "--engine", "storm",
         "-o", "wordcount.max_words=3000", "-o", "wordcount.seed=5", "--json",
         "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, timeout=90, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["reason"] == "finished"
    top = summary["outputs"]["count_bolt/default"]["top"]
    sys.path.insert(0, str(EXAMPLE / "src"))
    try:
        from spouts.words import generate_words
    finally:
        sys.path.pop(0)
    expected = collections.Counter(generate_words(5, 3000)).most_common(1)[0]
    assert top[0][1] == expected[1]


def test_cli_unknown_topology_name_is_one_clean_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "engine.tools.cli.main", "run", str(EXAMPLE), "-n", "nope"],
        capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "heron: error: unknown topology 'nope' (-n): no "
        f"{EXAMPLE / 'topologies' / 'nope.py'}; available: wordcount"]
