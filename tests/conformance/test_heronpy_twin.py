"""A heronpy topology and its ``heron-migrate --heronpy`` twin on both engines
(``heron-conformance run --heronpy``): each run matches the rows the topology means, and
each engine's original matches its twin row for row in Spark, acks and fails included."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from conformance.capture import read_capture
from conformance.catalogue import HERONPY_CASES, case_named
from conformance.catalogue.case import PROJECTS
from conformance.cli import main
from conformance.engines import StormAdapter
from conformance.runner import expected_records
from conformance.twin import twin_runs

CASE = "heronpy_word_count"


def test_the_case_is_a_heronpy_project_with_a_twin():
    case = case_named(CASE, HERONPY_CASES)
    assert case.twin == "heronpy" and case.project == PROJECTS / "heronpy"
    topology = (case.project / "topologies" / f"{case.topology}.py").read_text()
    assert "TopologyBuilder" in topology and "streamparse" not in topology
    rows = expected_records(case)
    acks = Counter(r["values"][0] for r in rows if r["stream"] == "acks")
    assert acks == {"ack": 60, "fail": 9}  # sids 3, 10, ... 59 fail once


def test_a_twin_that_cannot_be_migrated_is_an_error_naming_the_case(tmp_path):
    project = tmp_path / "broken"
    (project / "topologies").mkdir(parents=True)
    (project / "topologies" / "t.py").write_text("from heronpy.api.topology import (\n")
    case = case_named(CASE, HERONPY_CASES)
    case = type(case)(**{**case.__dict__, "project": project})
    twins, why = twin_runs([StormAdapter()], case, tmp_path / "report")
    assert [t.name for t in twins] == ["storm:migrated"]
    assert why is not None and why.startswith(f"case {CASE}: its migrated twin cannot be made")
    assert "topologies/t.py:1:1: does not parse" in why


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_heronpy_and_its_migrated_twin_give_the_same_rows_on_both_engines(spark, tmp_path):
    report = tmp_path / "report"
    result = CliRunner().invoke(main, ["run", "--heronpy", "--report", str(report)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    (case,) = json.loads((report / "results.json").read_text())["cases"]
    assert case["case"] == CASE
    runs = {r["engine"]: r for r in case["runs"]}
    assert list(runs) == ["storm", "heron", "storm:migrated", "heron:migrated"]
    for engine, run in runs.items():  # each run is exactly what the topology means
        assert run["verdict"] == "pass", (engine, run["reason"])
        assert run["diff"]["observed"] == "exact", engine
    pairs = {(p["left"], p["right"]): p for p in case["pairs"]}
    assert list(pairs) == [("storm", "heron"), ("storm", "storm:migrated"),
                           ("heron", "heron:migrated")]
    for pair in pairs.values():
        assert pair["verdict"] == "pass" and pair["diff"]["observed"] == "exact", pair
        assert pair["diff"]["counts"]["rows_left"] == pair["diff"]["counts"]["rows_right"] \
            == 792
    # the twin is streamparse, with heronpy's acking kept; it failed and replayed as heronpy
    twin = report / "migrated" / CASE
    assert "from streamparse import Topology, Grouping" in (
        twin / "topologies" / "heronpy_word_count.py").read_text()
    assert "auto_ack = False" in (twin / "src" / "catalogue_heronpy.py").read_text()
    heron_twin = report / runs["heron:migrated"]["outputs"][0]
    acks = Counter(r["values"][0] for r in read_capture(heron_twin)
                   if r["component"] == "sentences" and r["stream"] == "acks")
    assert acks == {"ack": 60, "fail": 9}


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_conformance_migrate_heronpy_compares_a_users_heronpy_project(spark, tmp_path):
    """``heron-conformance migrate --heronpy PROJECT``: the user's heronpy project and its
    --heronpy copy on the storm engine, row for row."""
    from conformance.catalogue.case import FIXTURES

    report = tmp_path / "report"
    result = CliRunner().invoke(main, [
        "migrate", "--heronpy", str(PROJECTS / "heronpy"), "--report", str(report),
        "-o", f"conformance.input.sentences={FIXTURES / 'sentences.jsonl'}"],
        catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    (case,) = json.loads((report / "results.json").read_text())["cases"]
    (pair,) = case["pairs"]
    assert (pair["left"], pair["right"], pair["verdict"]) == (
        "storm:original", "storm:migrated", "pass")
    assert pair["diff"]["observed"] == "exact"
    assert pair["diff"]["counts"]["rows_left"] == 792  # every stream, acks and fails too
    assert "migrated topologies/heronpy_word_count.py" in (
        report / "migration.txt").read_text()
