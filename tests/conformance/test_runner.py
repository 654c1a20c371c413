"""The runner's verdicts, sharing, repeats and failure injection (on stand-in engines and
the real ones), the capture format, and the fixture spout for users' topologies."""

from __future__ import annotations

import json
import math
import re
import threading
from collections import Counter
from pathlib import Path

import pytest

from conformance.canonical import canonical_row
from conformance.capture import CaptureFormatError, CaptureWriter, read_capture
from conformance.catalogue import Case, Kill, case_named
from conformance.engines import HeronAdapter, StormAdapter
from conformance.fixture_spout import FixtureError, assign_rows, read_fixture
from conformance.model import Comparison, SemanticClass, Verdict
from conformance.runner import Runner, topology_case

ROWS = [("bolt", "default", [n, f"w{n % 3}"]) for n in range(12)]


def simple_case(name: str = "simple", **kw) -> Case:
    fields = dict(project=Path("/nowhere"), topology="t", description="test case",
                  comparison=Comparison(streams=(("bolt", "default"),)),
                  expected=lambda inputs: list(ROWS))
    fields.update(kw)
    return Case(name=name, **fields)


def no_spark():
    pytest.fail("this run should need no diff, so no Spark")


# -- verdicts -------------------------------------------------------------------------------
def test_identical_outputs_pass_exact_on_each_engine_and_as_a_pair(spark, scripted, tmp_path):
    a, b = scripted("a", lambda c: ROWS), scripted("b", lambda c: list(reversed(ROWS)))
    suite = Runner([a, b], spark=spark, report_dir=tmp_path).run([simple_case()])
    (case,) = suite.cases
    assert [r.verdict for r in case.runs] == [Verdict.PASS, Verdict.PASS]
    assert all(r.diff.observed is SemanticClass.EXACT for r in case.runs)
    (pair,) = case.pairs
    assert (pair.left, pair.right, pair.verdict) == ("a", "b", Verdict.PASS)
    assert suite.exit_code() == 0
    # the run's capture and the expected rows are written, relative to the report
    assert case.runs[0].outputs == ["captures/r0/simple/a/",
                                    "captures/r0/simple/expected.jsonl"]
    expected = list(read_capture(tmp_path / case.runs[0].outputs[1]))
    assert {r["engine"] for r in expected} == {"expected"}
    assert len(expected) == len(ROWS)


def test_a_missing_row_fails_as_at_most_once_and_names_the_row(spark, scripted, tmp_path):
    a, b = scripted("a", lambda c: ROWS), scripted("b", lambda c: ROWS[:5] + ROWS[6:])
    suite = Runner([a, b], spark=spark, report_dir=tmp_path).run([simple_case()])
    run_b = suite.cases[0].runs[1]
    assert run_b.verdict is Verdict.FAIL
    assert run_b.diff.observed is SemanticClass.AT_MOST_ONCE
    assert run_b.diff.counts.missing == 1
    assert [(s.row, s.left, s.right) for s in run_b.diff.samples] == [
        (["bolt", "default", 5, "w2"], 1, 0)]
    assert "observed at-most-once subset, allowed exact" in run_b.reason
    assert suite.cases[0].pairs[0].verdict is Verdict.FAIL
    assert suite.exit_code() == 1


def test_duplicates_pass_where_the_case_allows_at_least_once(spark, scripted, tmp_path):
    doubled = scripted("a", lambda c: ROWS + ROWS[:3])
    case = simple_case(allowed=SemanticClass.AT_LEAST_ONCE)
    suite = Runner([doubled], spark=spark, report_dir=tmp_path).run([case])
    run = suite.cases[0].runs[0]
    assert (run.verdict, run.diff.observed) == (Verdict.PASS, SemanticClass.AT_LEAST_ONCE)
    assert run.diff.counts.duplicate_extras == 3


def test_a_run_that_ends_badly_is_a_harness_error(spark, scripted, tmp_path):
    hung = scripted("a", lambda c: ROWS[:2], reason="time limit",
                    error="case simple on engine a did not finish within 3s")
    suite = Runner([hung], spark=no_spark, report_dir=tmp_path).run([simple_case()])
    run = suite.cases[0].runs[0]
    assert run.verdict is Verdict.ERROR
    assert run.reason == "case simple on engine a did not finish within 3s"
    assert suite.exit_code() == 2


def test_an_engine_without_a_needed_capability_is_skipped_and_not_run(spark, scripted,
                                                                      tmp_path):
    full = scripted("full", lambda c: ROWS)
    partial = scripted("partial", lambda c: ROWS, capabilities=frozenset({"multilang"}))
    case = simple_case(tags=("acking",))
    suite = Runner([full, partial], spark=spark, report_dir=tmp_path).run([case])
    run = suite.cases[0].runs[1]
    assert run.verdict is Verdict.SKIPPED
    assert run.reason == "needs capability at-least-once acking (issue: heron acking/backpressure)"
    assert partial.calls == []
    assert suite.cases[0].pairs[0].verdict is Verdict.SKIPPED
    assert suite.cases[0].verdict is Verdict.SKIPPED
    assert suite.exit_code() == 0


def test_an_expected_function_that_breaks_is_an_error_naming_the_case(scripted, tmp_path):
    def broken(inputs):
        return [("bolt", "default")]  # not (component, stream, values)

    suite = Runner([scripted("a", lambda c: ROWS)], spark=no_spark,
                   report_dir=tmp_path).run([simple_case("oops", expected=broken)])
    run = suite.cases[0].runs[0]
    assert run.verdict is Verdict.ERROR
    assert "case oops" in run.reason and "expected" in run.reason


# -- sharing, repeats, failure injection, progress --------------------------------------------
def test_cases_on_the_same_topology_and_input_share_one_run(spark, scripted, tmp_path):
    rows = ROWS + [("other", "default", [1])]
    a = scripted("a", lambda c: rows)
    first = simple_case("first")
    second = simple_case("second", comparison=Comparison(streams=(("other", "default"),)),
                         expected=lambda inputs: [("other", "default", [1])])
    suite = Runner([a], spark=spark, report_dir=tmp_path).run([first, second])
    assert len(a.calls) == 1
    assert [c.verdict for c in suite.cases] == [Verdict.PASS, Verdict.PASS]
    # each case gets its own streams in a capture that carries its name
    own = list(read_capture(tmp_path / suite.cases[1].runs[0].outputs[0]))
    assert [(r["case"], r["component"]) for r in own] == [("second", "other")]
    assert suite.cases[1].runs[0].metadata["shared run"]


def test_repeat_runs_every_case_n_times(spark, scripted, tmp_path):
    a = scripted("a", lambda c: ROWS)
    suite = Runner([a], spark=spark, report_dir=tmp_path, repeat=3).run([simple_case()])
    assert [c.repeat for c in suite.cases] == [0, 1, 2]
    assert len(a.calls) == 3
    assert len({c.runs[0].run_id for c in suite.cases}) == 3


def test_inject_failures_kills_only_at_least_once_cases(spark, scripted, tmp_path):
    a = scripted("a", lambda c: ROWS + ROWS[:2])
    reliable = simple_case("reliable", allowed_under_failure=SemanticClass.AT_LEAST_ONCE,
                           inject=Kill("bolt", 5))
    plain = simple_case("plain", project=Path("/elsewhere"))
    suite = Runner([a], spark=spark, report_dir=tmp_path, inject_failures=True).run(
        [reliable, plain])
    assert a.calls == [("reliable", Kill("bolt", 5)), ("plain", None)]
    by_name = {c.case: c for c in suite.cases}
    assert by_name["reliable"].allowed is SemanticClass.AT_LEAST_ONCE
    assert "injected-failure" in by_name["reliable"].tags
    assert by_name["reliable"].verdict is Verdict.PASS
    assert by_name["plain"].allowed is SemanticClass.EXACT
    assert by_name["plain"].verdict is Verdict.FAIL  # duplicates are not allowed there
    assert "--inject-failures" in by_name["reliable"].runs[0].command


def test_progress_hears_of_every_run_and_case(spark, scripted, tmp_path):
    events = []

    class Listener:
        def suite_started(self, total):
            events.append(("suite", total))

        def run_started(self, label, engine, repeat):
            events.append(("start", label, engine))

        def run_finished(self, label, engine, repeat, outcome, elapsed):
            events.append(("end", label, engine, outcome))

        def comparing(self, case, repeat):
            events.append(("compare", case))

        def case_finished(self, result):
            events.append(("case", result.case, result.verdict.value))

    runner = Runner([scripted("a", lambda c: ROWS), scripted("b", lambda c: ROWS)],
                    spark=spark, report_dir=tmp_path, progress=Listener())
    runner.run([simple_case()])
    assert events == [("suite", 2), ("start", "simple", "a"), ("end", "simple", "a", "ran"),
                      ("start", "simple", "b"), ("end", "simple", "b", "ran"),
                      ("compare", "simple"), ("case", "simple", "pass")]


# -- the real engines: time bounds and failure injection ---------------------------------------
def lingering(case_name: str, linger: float) -> Case:
    """A catalogue case whose spout reports exhaustion only after ``linger`` seconds."""
    from dataclasses import replace

    case = case_named(case_name)
    return replace(case, options={**case.options, "conformance.linger.secs": linger})


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("adapter, limit", [(StormAdapter, 1.5), (HeronAdapter, 6.0)])
def test_a_hanging_run_is_stopped_at_its_time_bound_and_named(adapter, limit, tmp_path):
    case = lingering("one_spout_two_bolts", 1000)
    suite = Runner([adapter()], spark=no_spark, report_dir=tmp_path,
                   time_limit=limit).run([case])
    run = suite.cases[0].runs[0]
    assert run.verdict is Verdict.ERROR
    assert run.reason.startswith(f"case one_spout_two_bolts on engine {adapter.name} did not "
                                 f"finish within {limit:g}s")
    assert run.elapsed < limit + 15
    assert suite.exit_code() == 2


@pytest.mark.slow
def test_storm_capture_has_every_stream_with_task_provenance(tmp_path):
    case = case_named("one_spout_two_bolts")
    out = StormAdapter().run(case, run_id="run-1", capture_path=tmp_path / "capture",
                             work_dir=tmp_path / "work")
    records = list(read_capture(out.capture))
    assert out.finished and out.records == len(records) == 360
    # one file per task, named after it, each holding only its task's rows
    files = sorted(p.name for p in out.capture.iterdir())
    assert files == ["doubler_1.jsonl", "doubler_2.jsonl", "numbers_3.jsonl",
                     "squarer_4.jsonl", "squarer_5.jsonl"], files
    for path in out.capture.iterdir():
        component, task = path.stem.rsplit("_", 1)
        assert {(r["component"], r["task"]) for r in read_capture(path)} == {
            (component, int(task))}
    assert {(r["component"], r["stream"]) for r in records} == {
        ("numbers", "default"), ("doubler", "default"), ("squarer", "default")}
    assert {(r["engine"], r["case"], r["run_id"]) for r in records} == {
        ("storm", "one_spout_two_bolts", "run-1")}
    tasks = {r["component"]: set() for r in records}
    for r in records:
        tasks[r["component"]].add(r["task"])
    assert len(tasks["numbers"]) == 1 and len(tasks["doubler"]) == 2


@pytest.mark.slow
def test_a_kill_that_never_happens_is_an_error_not_a_pass(tmp_path):
    from dataclasses import replace

    case = replace(case_named("replay_after_kill"), kill=Kill("tail", 100_000))
    suite = Runner([StormAdapter()], spark=no_spark, report_dir=tmp_path).run([case])
    run = suite.cases[0].runs[0]
    assert run.verdict is Verdict.ERROR
    assert "the failure was not injected" in run.reason
    assert "fewer than the 100000" in run.reason


# -- the capture format ------------------------------------------------------------------------
def test_capture_records_round_trip_values_json_cannot_spell(tmp_path):
    path = tmp_path / "c.jsonl"
    with CaptureWriter(path, engine="storm", case="c", run_id="r") as writer:
        writer.write("bolt", "default", 3, [b"\x00\xff", {2, 1}, float("nan"), ("t", 1)])
        writer.write("bolt", "default", 3, [{(1, 2): "tuple key"}])
    first, second = read_capture(path)
    # a dict key JSON cannot spell: the row is written in its canonical form
    assert second["values"] == [{"[1,2]": "tuple key"}]
    record = first
    assert list(record) == ["engine", "case", "run_id", "component", "stream", "task",
                            "values"]
    values = record["values"]
    assert values[0] == {"$bytes": "00ff"}
    assert values[1] == [1, 2]
    assert math.isnan(values[2])
    assert values[3] == ["t", 1]
    # read back, the row is canonically what the original values would have been
    row = canonical_row(record, Comparison())
    assert row[2:5] == [{"$bytes": "00ff"}, [1, 2], {"$float": "nan"}]


def test_capture_writer_is_safe_from_many_threads(tmp_path):
    path = tmp_path / "c.jsonl"
    writer = CaptureWriter(path, engine="storm", case="c", run_id="r")

    def emit(task):
        for n in range(500):
            writer.write("bolt", "default", task, [n, "x" * 50])

    threads = [threading.Thread(target=emit, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    records = list(read_capture(path))
    assert writer.count == len(records) == 2000
    assert Counter(r["task"] for r in records) == {0: 500, 1: 500, 2: 500, 3: 500}


@pytest.mark.parametrize("line, message", [
    ("{nope", "not JSON"),
    ('["a"]', "a capture record is a JSON object"),
    ('{"engine": "e", "values": []}', "capture record lacks case, run_id, component"),
    ('{"engine": "e", "case": "c", "run_id": "r", "component": "b", "stream": "s", '
     '"task": 1, "values": 3}', "'values' must be a list"),
])
def test_a_bad_capture_line_is_named_by_file_and_line(tmp_path, line, message):
    path = tmp_path / "c.jsonl"
    good = json.dumps({"engine": "e", "case": "c", "run_id": "r", "component": "b",
                       "stream": "s", "task": 1, "values": [1]})
    path.write_text(good + "\n" + line + "\n")
    with pytest.raises(CaptureFormatError, match=f"^{path}:2: .*{message}"):
        list(read_capture(path))


# -- the fixture spout ------------------------------------------------------------------------
def test_fixture_rows_are_read_with_their_spout_and_stream(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"values": ["a"]}\n\n{"spout": "s2", "stream": "odd", "values": [1]}\n')
    assert [(r.values, r.stream, r.spout, r.line) for r in read_fixture(path)] == [
        (["a"], "default", None, 1), ([1], "odd", "s2", 3)]


@pytest.mark.parametrize("text, message", [
    ('{"values": "a"}', r"in\.jsonl:1: a fixture row is an object with a \"values\" list"),
    ('{"values": [1], "colour": "red"}', r"in\.jsonl:1: unknown key\(s\) colour"),
    ("nope", r"in\.jsonl:1: not JSON"),
])
def test_a_bad_fixture_row_is_named_by_file_and_line(tmp_path, text, message):
    path = tmp_path / "in.jsonl"
    path.write_text(text + "\n")
    with pytest.raises(FixtureError, match=message):
        read_fixture(path)


def test_fixture_rows_must_fit_the_spouts_they_replace(tmp_path):
    path = tmp_path / "in.jsonl"
    spouts = {"words": {"default": (["word"], False)},
              "numbers": {"default": (["n", "key"], False), "d": (["n"], True)}}
    cases = [
        ('{"values": ["a"]}', "several spouts (numbers, words); say which one"),
        ('{"spout": "nope", "values": ["a"]}', "no spout 'nope' in the topology"),
        ('{"spout": "words", "stream": "x", "values": ["a"]}', "declares no stream 'x'"),
        ('{"spout": "numbers", "values": [1]}', "1 value(s) for numbers/default, which "
                                                "declares 2 field(s)"),
        ('{"spout": "numbers", "stream": "d", "values": [1]}', "is direct"),
    ]
    for text, message in cases:
        path.write_text(text + "\n")
        with pytest.raises(FixtureError, match=r"in\.jsonl:1: .*" + re.escape(message)):
            assign_rows(read_fixture(path), spouts, path)


@pytest.mark.slow
def test_a_user_topology_runs_on_its_fixture_instead_of_its_spouts(user_project, tmp_path):
    fixture = tmp_path / "in.jsonl"
    fixture.write_text("".join(json.dumps({"values": [w]}) + "\n"
                               for w in ["emu", "yak", "emu", "gnu"]))
    case = topology_case(user_project, "shout", work_dir=tmp_path / "work", fixture=fixture)
    out = StormAdapter().run(case, run_id="r", capture_path=tmp_path / "c.jsonl",
                             work_dir=tmp_path / "run")
    assert out.finished, out.error
    records = list(read_capture(out.capture))
    by_stream = Counter((r["component"], tuple(r["values"])) for r in records)
    assert by_stream == Counter({("words", ("emu",)): 2, ("words", ("yak",)): 1,
                                 ("words", ("gnu",)): 1, ("upper", ("emu", "EMU", 0)): 2,
                                 ("upper", ("yak", "YAK", 0)): 1,
                                 ("upper", ("gnu", "GNU", 0)): 1})
    # the user's project is untouched; the run used a generated one linking to its src
    assert (case.project / "src").resolve() == (user_project / "src").resolve()
    assert sorted(p.name for p in (user_project / "topologies").iterdir()) == ["shout.py"]


@pytest.mark.slow
def test_max_tuples_bounds_a_users_own_endless_spout(user_project, tmp_path):
    case = topology_case(user_project, "shout", work_dir=tmp_path / "work", max_tuples=7)
    out = StormAdapter().run(case, run_id="r", capture_path=tmp_path / "c.jsonl",
                             work_dir=tmp_path / "run")
    assert out.finished, out.error
    records = list(read_capture(out.capture))
    assert Counter(r["component"] for r in records) == {"words": 7, "upper": 7}


def test_only_at_least_once_user_topologies_take_injected_failures(tmp_path):
    from tests.conformance.conftest import write_user_project

    acking = write_user_project(tmp_path / "a", {"topology.acker.executors": 1})
    quiet = write_user_project(tmp_path / "b", {"topology.acker.executors": 0})
    case = topology_case(acking, "shout", work_dir=tmp_path / "w1", inject=Kill("upper"))
    assert case.allowed_under_failure is SemanticClass.AT_LEAST_ONCE
    assert case.injected_kill(True) == Kill("upper")
    per_key = topology_case(acking, "shout", work_dir=tmp_path / "w2",
                            comparison=Comparison(kind="per_key", key_columns=(0,),
                                                  value_column=1))
    assert per_key.allowed_under_failure is SemanticClass.EXACT
    # per key without --stream: the result streams only (the spout's has no value column)
    assert per_key.comparison.streams == (("upper", "default"),)
    at_most_once = topology_case(quiet, "shout", work_dir=tmp_path / "w3")
    assert at_most_once.allowed_under_failure is None
    assert at_most_once.injected_kill(True) is None
