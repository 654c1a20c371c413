"""The built-in catalogue: declared right (fast checks), and passing on ``storm`` vs
``heron`` (one module-scoped run of every case on both engines, then a test per case).
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from conformance.catalogue import CAPABILITIES, CATALOGUE, Case, CaseError, select_cases
from conformance.catalogue import expected as exp
from conformance.catalogue.generate import FIXTURES, GENERATORS, render
from conformance.engines import (
    HeronAdapter,
    StormAdapter,
    case_options,
    isolated_imports,
)
from conformance.model import SemanticClass, Verdict
from conformance.runner import Runner, expected_records, fixture_inputs

#: what the heron engine cannot do yet, and how the skip says so (nothing any more:
#: failure injection kills the task's OS process, tests/conformance/test_heron_kill.py)
HERON_SKIPS: set[str] = set()
SKIP_REASON: dict[str, str] = {}


# -- the catalogue as declared --------------------------------------------------------------
def test_the_catalogue_covers_what_issue_6_lists():
    names = {c.name for c in CATALOGUE}
    for grouping in ("shuffle", "fields", "all", "global", "none", "direct",
                     "local_or_shuffle"):
        assert f"grouping_{grouping}" in names
    for shape in ("one_spout_two_bolts", "several_spouts", "bolt_emits_twice",
                  "named_streams", "diamond", "batching_bolt_ticks",
                  "reliable_spout_failing_bolt", "at_most_once_idless", "multilang_bolt",
                  "word_count"):
        assert shape in names
    assert any(c.kill is not None for c in CATALOGUE)
    assert any(c.comparison.kind == "per_key" for c in CATALOGUE)
    assert len(names) == len(CATALOGUE) >= 20


def test_capability_tags_are_known_and_failure_cases_say_so():
    for case in CATALOGUE:
        if case.kill is not None:
            # a kill is survived by replay: acking's, or a rollback of checkpointed state
            assert "failure-injection" in case.tags, case.name
            assert {"acking", "stateful"} & set(case.tags), case.name
            assert case.allowed_under_failure is not None, case.name
        for tag in case.needs():
            assert tag in CAPABILITIES


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_fixtures_are_what_their_seeded_generators_make(name):
    assert (FIXTURES / name).read_text(encoding="utf-8") == render(GENERATORS[name]())


def test_every_case_compares_streams_its_topology_declares():
    """Load (not run) every topology: the streams a case compares exist, its fixtures
    exist, and the spouts it feeds are spouts of the topology."""
    from engine.common.submission import load_topology

    for case in CATALOGUE:
        with isolated_imports(case.project):
            loaded = load_topology(case.project, name=case.topology,
                                   cli_options=case_options(case))
        plan = loaded.plan
        for component, stream in case.comparison.streams:
            assert component in plan.components, (case.name, component)
            assert stream in plan.components[component].outputs, (case.name, stream)
        for spout, path in case.fixtures.items():
            assert path.is_file(), (case.name, path)
            assert plan.components[spout].kind == "spout", (case.name, spout)


def test_expected_rows_follow_from_the_fixtures():
    numbers = fixture_inputs(next(c for c in CATALOGUE if c.name == "grouping_fields"))
    assert len(numbers["numbers"]) == 120
    assert Counter(len(expected_records(c)) for c in CATALOGUE
                   if c.name.startswith("grouping_"))[120] == 6  # all: 240
    twice = Counter(tuple(r[2]) for r in exp.twice(numbers))
    assert set(twice.values()) == {2}
    reliable = Counter((r[0], r[2][0]) for r in exp.reliable(numbers))
    assert reliable[("numbers", 5)] == 2 and reliable[("numbers", 6)] == 1
    assert exp.batching(numbers)[0] == ("totals", "default", ["k0", sum(range(0, 120, 7))])
    sentences = fixture_inputs(next(c for c in CATALOGUE if c.name == "word_count"))
    rows = exp.word_count(sentences)
    words = sum(len(s.split()) for _, s in sentences["sentences"])
    assert len(rows) == words
    split = exp.split_words(sentences)
    assert len(split) == words and len({(r[2][0], r[2][1]) for r in split}) == words


def test_the_fields_expectation_is_the_documented_grouping_hash():
    from engine.common.grouping import fields_key_hash

    for key in ("k0", "k1", "k6", "", "ünïcode", 7):
        assert exp.fields_index(key, 3) == fields_key_hash([key], [0]) % 3


def test_cases_are_selected_by_regex():
    assert [c.name for c in select_cases("^grouping_(all|none)$")] == ["grouping_all",
                                                                       "grouping_none"]
    with pytest.raises(CaseError, match="matches no case"):
        select_cases("^nothing$")
    with pytest.raises(CaseError, match="not a regular expression"):
        select_cases("(")


# -- the whole catalogue on both engines ----------------------------------------------------
@pytest.fixture(scope="module")
def suite(spark, kafka_broker, tmp_path_factory):
    """Every case on storm and heron, once (the Kafka case through the test broker); the
    report written from it."""
    from conformance.report import write_report

    report_dir = tmp_path_factory.mktemp("catalogue-report")
    result = Runner([StormAdapter(), HeronAdapter()], spark=spark, report_dir=report_dir,
                    kafka=kafka_broker.bootstrap).run(list(CATALOGUE))
    paths = write_report(result, report_dir)
    return result, report_dir, paths


def heron_skips(case: Case) -> set[str]:
    return HERON_SKIPS & set(case.tags)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("case", CATALOGUE, ids=lambda c: c.name)
def test_case_passes_on_storm_and_heron(suite, case):
    result, _, _ = suite
    (outcome,) = [c for c in result.cases if c.case == case.name]
    runs = {r.engine: r for r in outcome.runs}
    storm, heron = runs["storm"], runs["heron"]
    assert storm.verdict is Verdict.PASS, storm.reason
    want = SemanticClass.AT_LEAST_ONCE if case.kill and case.comparison.kind == "rows" \
        else SemanticClass.EXACT
    assert storm.diff.observed is want, storm.reason
    skips = heron_skips(case)
    (pair,) = outcome.pairs
    if skips:
        assert heron.verdict is Verdict.SKIPPED
        assert heron.reason == "; ".join(SKIP_REASON[t] for t in sorted(skips))
        assert pair.verdict is Verdict.SKIPPED
        assert outcome.verdict is Verdict.SKIPPED
    else:
        assert heron.verdict is Verdict.PASS, heron.reason
        # a killed task's lost roots replay on heron too: rows repeat, per-key stays exact
        assert heron.diff.observed is want, heron.reason
        if case.kill:
            assert "killed task" in heron.metadata["injected failure"], heron.metadata
        assert (pair.left, pair.right, pair.verdict) == ("storm", "heron", Verdict.PASS), \
            pair.reason
        assert outcome.verdict is Verdict.PASS


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_failure_injection_replays_and_is_reported(suite):
    result, _, _ = suite
    (outcome,) = [c for c in result.cases if c.case == "replay_after_kill"]
    storm, heron = outcome.runs
    for run in (storm, heron):
        assert "killed task" in run.metadata["injected failure"], run.engine
        assert run.diff.counts.duplicate_extras >= 1 and run.diff.counts.missing == 0, \
            run.engine
    assert outcome.allowed is SemanticClass.AT_LEAST_ONCE


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_catalogue_report_is_written_and_exits_zero(suite):
    result, report_dir, paths = suite
    assert result.exit_code() == 0
    assert set(paths) == {"html", "json", "junit"}
    data = json.loads(paths["json"].read_text())
    assert [c["case"] for c in data["cases"]] == [c.name for c in CATALOGUE]
    assert data["engines"] == ["storm", "heron"]
    # every capture a run lists is there, relative to the report: a file (expected rows,
    # a shared run's rows of one case) or a run's directory of per-task files
    for case in data["cases"]:
        for run in case["runs"]:
            for output in run["outputs"]:
                path = report_dir / output
                assert path.is_file() or (output.endswith("/") and path.is_dir()), output
    assert re.search(r"<testsuite", paths["junit"].read_text())
