"""``heron-conformance migrate``: the streamparse project unchanged against its
heron-migrate'd copy, on the same engine, compared row for row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.capture import read_capture
from conformance.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "wordcount"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_wordcount_and_its_migrated_copy_give_the_same_rows(spark, tmp_path):
    report = tmp_path / "report"
    result = invoke("migrate", str(EXAMPLE), "-o", "wordcount.max_words=400",
                    "-o", "wordcount.seed=5", "--report", str(report))
    assert result.exit_code == 0, result.stderr
    data = json.loads((report / "results.json").read_text())
    (case,) = data["cases"]
    assert case["case"] == "migrate-wordcount"
    assert [r["engine"] for r in case["runs"]] == ["storm:original", "storm:migrated"]
    assert all(r["verdict"] == "pass" for r in case["runs"])
    (pair,) = case["pairs"]
    assert (pair["left"], pair["right"]) == ("storm:original", "storm:migrated")
    assert pair["verdict"] == "pass" and pair["diff"]["observed"] == "exact"
    # every word and every running count: 400 spout tuples and 400 counts on each side
    assert pair["diff"]["counts"]["rows_left"] == pair["diff"]["counts"]["rows_right"] == 800
    # the migrated copy really is migrated, and the example untouched
    migrated = (report / "migrated" / "topologies" / "wordcount.py").read_text()
    assert "from compat.storm_api import" in migrated
    assert "from streamparse import" in (EXAMPLE / "topologies" / "wordcount.py").read_text()
    assert "migrated topologies/wordcount.py" in (report / "migration.txt").read_text()
    captured = next(read_capture(report / case["runs"][1]["outputs"][0]))
    assert captured["engine"] == "storm:migrated"


def test_max_tuples_bounds_both_copies_on_both_engines(spark, tmp_path):
    report = tmp_path / "report"
    result = invoke("migrate", str(EXAMPLE), "--max-tuples", "150", "-o", "wordcount.seed=9",
                    "--engines", "storm,heron", "--per-key", "0:1:max",
                    "--stream", "count_bolt", "--report", str(report))
    assert result.exit_code == 0, result.stderr
    (case,) = json.loads((report / "results.json").read_text())["cases"]
    assert [r["engine"] for r in case["runs"]] == [
        "storm:original", "storm:migrated", "heron:original", "heron:migrated"]
    assert [(p["left"], p["right"], p["verdict"]) for p in case["pairs"]] == [
        ("storm:original", "storm:migrated", "pass"),
        ("heron:original", "heron:migrated", "pass")]
    counts = case["pairs"][0]["diff"]["counts"]
    assert 0 < counts["rows_left"] == counts["rows_right"] <= 42  # one row per word


def test_a_project_that_fails_to_migrate_is_a_harness_error(tmp_path):
    project = tmp_path / "py2"
    (project / "topologies").mkdir(parents=True)
    (project / "topologies" / "old.py").write_text("print 'python 2'\n")
    result = invoke("migrate", str(project), "--report", str(tmp_path / "report"))
    assert result.exit_code == 2
    assert "heron-migrate could not migrate" in result.stderr


GOLDEN = REPO / "tests" / "migrate" / "golden" / "quickstart" / "input"


def test_the_golden_quickstart_and_its_migrated_copy_give_the_same_counts(spark, tmp_path):
    """The scaffolded streamparse quickstart (an endless spout cycling four words) bounded
    to 200 next_tuple calls: its heron-migrate'd copy counts exactly what it counts."""
    report = tmp_path / "report"
    result = invoke("migrate", str(GOLDEN), "--max-tuples", "200", "--report", str(report))
    assert result.exit_code == 0, result.stderr
    (case,) = json.loads((report / "results.json").read_text())["cases"]
    (pair,) = case["pairs"]
    assert pair["verdict"] == "pass" and pair["diff"]["observed"] == "exact"
    # 200 words and 200 running counts on each side; the cycle makes the counts known
    assert pair["diff"]["counts"]["rows_left"] == pair["diff"]["counts"]["rows_right"] == 400
    assert "from compat.storm_api import" in (report / "migrated" / "src" / "spouts"
                                              / "words.py").read_text()
