"""``heron-conformance``: exit codes, the report directory, progress and summary, and
``--topology`` runs of a user's own project.

Most runs are in-process (click's runner), sharing the session's SparkSession; one runs
the installed console script to pin the entry point.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.catalogue import CATALOGUE
from conformance.cli import main
from tests.conformance.conftest import write_user_project

REPO = Path(__file__).resolve().parents[2]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def results(report: Path) -> dict:
    return json.loads((report / "results.json").read_text())


# -- usage and harness errors (no engine, no Spark) ------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["run", "--engines", "storm,flink"], "--engines: unknown engine(s) flink"),
    (["run", "--cases", "^nothing$"], "--cases '^nothing$' matches no case"),
    (["run", "-n", "wordcount"], "-n only apply with --topology PROJECT"),
    (["run", "--engines", "storm,storm"], "names an engine twice"),
])
def test_bad_arguments_are_one_line_and_exit_2(tmp_path, args, message):
    result = invoke(*args, "--report", str(tmp_path / "r"))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [f"heron-conformance: error: {lines[0].split('error: ', 1)[1]}"]
    assert message in lines[0]


def test_input_and_max_tuples_exclude_each_other(user_project, tmp_path):
    fixture = tmp_path / "in.jsonl"
    fixture.write_text('{"values": ["a"]}\n')
    result = invoke("run", "--topology", str(user_project), "--input", str(fixture),
                    "--max-tuples", "3", "--report", str(tmp_path / "r"))
    assert result.exit_code == 2
    assert "--input and --max-tuples exclude each other" in result.stderr


def test_a_bad_fixture_line_is_named_before_anything_runs(user_project, tmp_path):
    fixture = tmp_path / "in.jsonl"
    fixture.write_text('{"values": ["a"]}\n{"values": ["a", "b"]}\n')
    result = invoke("run", "--topology", str(user_project), "--input", str(fixture),
                    "--engines", "storm", "--report", str(tmp_path / "r"))
    assert result.exit_code == 2
    assert f"{fixture}:2: 2 value(s) for words/default, which declares 1 field(s)" in \
        result.stderr


def test_a_foreign_non_empty_report_directory_is_refused(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "notes.txt").write_text("mine")
    result = invoke("run", "--cases", "^grouping_all$", "--report", str(tmp_path / "r"))
    assert result.exit_code == 2
    assert "not empty and holds no earlier report" in result.stderr
    assert (tmp_path / "r" / "notes.txt").read_text() == "mine"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_topology_that_never_ends_is_a_harness_error_naming_case_and_engine(user_project,
                                                                             tmp_path):
    # no user.limit: the spout never reports exhaustion
    result = invoke("run", "--topology", str(user_project), "--engines", "storm",
                    "--time-limit", "1.5", "--report", str(tmp_path / "r"))
    assert result.exit_code == 2
    data = results(tmp_path / "r")
    (run,) = data["cases"][0]["runs"]
    assert run["verdict"] == "error"
    assert run["reason"].startswith("case shout on engine storm did not finish within 1.5s")
    assert "error: shout on storm: case shout on engine storm did not finish" in result.stderr


# -- real runs ---------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_catalogue_subset_on_both_engines_writes_the_report_and_exits_0(spark, tmp_path):
    report = tmp_path / "report"
    result = invoke("run", "--cases", "^(grouping_global|bolt_emits_twice|replay_after_kill)$",
                    "--report", str(report))
    assert result.exit_code == 0, result.stderr
    for name in ("index.html", "results.json", "junit.xml"):
        assert (report / name).is_file()
    data = results(report)
    assert [c["case"] for c in data["cases"]] == ["grouping_global", "bolt_emits_twice",
                                                  "replay_after_kill"]
    assert [c["verdict"] for c in data["cases"]] == ["pass", "pass", "pass"]
    # the one-screen summary: a row per case, a column per engine and the pair, totals
    err = result.stderr
    assert "storm vs heron" in err
    # an injected kill on both engines: replays, nothing missing
    assert "replay_after_kill  pass at-least-once superset  pass at-least-once superset" in err
    assert "3 case run(s): 3 pass" in err
    assert "skipped" not in err
    assert f"report: {report / 'index.html'}" in err
    # a second run into the same report directory replaces the earlier report
    again = invoke("run", "--cases", "^grouping_global$", "--engines", "storm",
                   "--report", str(report))
    assert again.exit_code == 0, again.stderr
    assert [c["case"] for c in results(report)["cases"]] == ["grouping_global"]
    assert not (report / "captures" / "r0" / "bolt_emits_twice").exists()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_repeat_and_json_output(spark, tmp_path):
    result = invoke("run", "--cases", "^grouping_all$", "--engines", "storm", "--repeat", "2",
                    "--json", "--report", str(tmp_path / "r"))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["exit_code"] == 0
    assert [c["repeat"] for c in data["results"]["cases"]] == [0, 1]
    assert "×2" in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_inject_failures_runs_at_least_once_cases_under_a_kill(spark, tmp_path):
    result = invoke("run", "--cases", "^reliable_spout_failing_bolt$", "--engines", "storm",
                    "--inject-failures", "--report", str(tmp_path / "r"))
    assert result.exit_code == 0, result.stderr
    (case,) = results(tmp_path / "r")["cases"]
    assert case["allowed"] == "at-least-once superset"
    assert "injected-failure" in case["tags"]
    run = case["runs"][0]
    assert "killed task" in run["metadata"]["injected failure"]
    assert run["diff"]["counts"]["missing"] == 0


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_user_topology_on_a_fixture_passes_on_both_engines(spark, user_project, tmp_path):
    fixture = tmp_path / "in.jsonl"
    fixture.write_text("".join(json.dumps({"values": [w]}) + "\n"
                               for w in ["emu", "yak", "emu", "gnu", "owl"] * 4))
    result = invoke("run", "--topology", str(user_project), "--input", str(fixture),
                    "--report", str(tmp_path / "r"))
    assert result.exit_code == 0, result.stderr
    (case,) = results(tmp_path / "r")["cases"]
    assert case["case"] == "shout"
    (pair,) = case["pairs"]
    assert (pair["left"], pair["right"], pair["verdict"]) == ("storm", "heron", "pass")
    assert pair["diff"]["counts"]["rows_left"] == 40
    assert "--engines heron" in case["runs"][1]["command"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_engines_that_differ_fail_with_exit_1_and_ignored_columns_fix_it(spark, tmp_path):
    # the bolt emits its process id: one process on storm, one per task on heron
    project = write_user_project(tmp_path / "p", {"topology.acker.executors": 0,
                                                  "user.where": "pid", "user.limit": 30})
    failing = invoke("run", "--topology", str(project), "--stream", "upper",
                     "--report", str(tmp_path / "r1"))
    assert failing.exit_code == 1, failing.stderr
    (case,) = results(tmp_path / "r1")["cases"]
    (pair,) = case["pairs"]
    assert pair["verdict"] == "fail"
    assert pair["diff"]["observed"] == "divergent"
    assert "fail: shout on storm vs heron" in failing.stderr
    passing = invoke("run", "--topology", str(project), "--stream", "upper",
                     "--ignore-column", "2", "--report", str(tmp_path / "r2"))
    assert passing.exit_code == 0, passing.stderr


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_the_console_script_lists_the_catalogue():
    script = shutil.which("heron-conformance")
    command = [script] if script else [sys.executable, "-m", "conformance.cli"]
    proc = subprocess.run([*command, "list"], capture_output=True, text=True, timeout=60,
                          cwd=REPO, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    for case in CATALOGUE:
        assert case.name in proc.stdout
