"""``heron-conformance summingbird``: the Summingbird job catalogue from the command line,
judged and reported like the topology catalogue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main

pytestmark = pytest.mark.timeout(300)


def invoke(*args: str):
    return CliRunner().invoke(main, ["summingbird", *args], catch_exceptions=False)


@pytest.mark.parametrize("args, message", [
    (["--platforms", "memory,flink"], "(unknown: flink)"),
    (["--platforms", "memory,memory"], "at most once"),
    (["--jobs", "^nothing$"], "--jobs '^nothing$' matches no job; jobs: word_count,"),
    (["--jobs", "("], "--jobs '(' is not a regular expression"),
])
def test_bad_arguments_are_one_line_and_exit_2(tmp_path, args, message):
    result = invoke(*args, "--report", str(tmp_path / "r"))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("heron-conformance: error: ")
    assert message in lines[0]
    assert not (tmp_path / "r").exists()  # refused before anything was written


def test_jobs_on_memory_batch_and_storm_write_a_passing_report(spark, tmp_path: Path):
    report = tmp_path / "report"
    result = invoke("--jobs", "^(word_count|first_and_last)$", "--platforms",
                    "memory,batch,storm", "--seed", "3", "--size", "25", "--json",
                    "--report", str(report))
    assert result.exit_code == 0, result.stderr
    for name in ("index.html", "results.json", "junit.xml"):
        assert (report / name).is_file()
    data = json.loads((report / "results.json").read_text())
    assert json.loads(result.stdout)["results"] == data
    assert data["engines"] == ["memory", "batch", "storm"]
    assert data["environment"]["seed"] == 3 and data["environment"]["size"] == 25
    by_case = {c["case"]: c for c in data["cases"]}
    assert set(by_case) == {"summingbird_word_count", "summingbird_first_and_last"}
    word_count = {r["engine"]: r["verdict"] for r in by_case["summingbird_word_count"]["runs"]}
    assert word_count == {"memory": "pass", "batch": "pass", "storm": "pass"}
    # first_and_last sums with a non-commutative semigroup: the streaming planner refuses
    # it by design, which is a skip, not a failure
    first_last = {r["engine"]: r["verdict"] for r in by_case["summingbird_first_and_last"]["runs"]}
    assert first_last["memory"] == "pass" and first_last["batch"] == "pass"
    assert first_last["storm"] == "skipped"
    assert "2 case run(s): 1 pass, 1 skipped" in result.stderr
    assert "skipped on storm: non-commutative semigroup, refused online by design" in result.stderr
    assert f"report: {report / 'index.html'}" in result.stderr
