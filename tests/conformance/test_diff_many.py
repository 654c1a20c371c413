"""One Spark pass for every diff of a case: each pair's result is what its own diff says,
and the runner judges a case with one pass (falling back to one diff per verdict, so a
damaged capture is still an error against its own run only)."""

from __future__ import annotations

import dataclasses

import pytest

import conformance.runner as runner_module
from conformance.capture import CaptureWriter
from conformance.diff import diff_captures, diff_many
from conformance.model import Comparison, SemanticClass, Verdict
from conformance.runner import Runner

from .test_runner import ROWS, simple_case

pytestmark = pytest.mark.timeout(300)


def write(path, rows, engine):
    with CaptureWriter(path, engine=engine, case="c", run_id=f"{engine}-1") as writer:
        for component, stream, values in rows:
            writer.write(component, stream, 1, values)
    return path


EXPECTED = [("count", "default", [w, n]) for n, w in enumerate("abcdefg")]
#: every row once more than expected: an at-least-once superset
DOUBLED = EXPECTED + EXPECTED[:3]
#: two rows short and one the expected rows never had, on a second stream too
STRAY = EXPECTED[2:] + [("count", "default", ["z", 99]), ("count", "other", ["o", 1])]


def without_timing(result):
    return dataclasses.replace(result, spark_seconds=0.0)


PER_KEY = Comparison(kind="per_key", key_columns=(0,), value_column=1)


@pytest.mark.parametrize("comparison", [Comparison(), PER_KEY], ids=["rows", "per_key"])
def test_each_pair_of_one_pass_is_what_its_own_diff_says(spark, tmp_path, comparison):
    sides = {"expected": [write(tmp_path / "e.jsonl", EXPECTED, "expected")],
             "storm": [write(tmp_path / "s.jsonl", DOUBLED, "storm")],
             "heron": [write(tmp_path / "h.jsonl", STRAY, "heron")]}
    pairs = [("expected", "storm"), ("expected", "heron"), ("storm", "heron")]
    together = diff_many(spark, sides, pairs, comparison)
    assert list(together) == pairs
    for left, right in pairs:
        alone = diff_captures(spark, sides[left], sides[right], comparison, left=left,
                              right=right)
        assert without_timing(together[(left, right)]) == without_timing(alone), (left, right)
    if comparison.kind == "rows":
        assert together[("expected", "storm")].observed is SemanticClass.AT_LEAST_ONCE
        assert together[("expected", "heron")].observed is SemanticClass.DIVERGENT
        # the pair that never saw the second stream does not count it
        assert together[("expected", "storm")].streams == []
        assert {s["stream"] for s in together[("storm", "heron")].streams} == {"default",
                                                                               "other"}


def test_a_side_no_pair_names_is_never_read(spark, tmp_path):
    sides = {"expected": [write(tmp_path / "e.jsonl", EXPECTED, "expected")],
             "storm": [write(tmp_path / "s.jsonl", EXPECTED, "storm")],
             "gone": [tmp_path / "no-such-capture.jsonl"]}
    (result,) = diff_many(spark, sides, [("expected", "storm")], Comparison()).values()
    assert result.observed is SemanticClass.EXACT


def test_a_pair_must_name_two_sides_it_was_given(spark, tmp_path):
    sides = {"a": [write(tmp_path / "a.jsonl", EXPECTED, "a")]}
    with pytest.raises(KeyError, match="'b', which is not a side"):
        diff_many(spark, sides, [("a", "b")], Comparison())
    with pytest.raises(ValueError, match="compares a side with itself"):
        diff_many(spark, sides, [("a", "a")], Comparison())


def test_the_runner_judges_a_case_in_one_pass(spark, scripted, tmp_path, monkeypatch):
    def one_by_one(*args, **kwargs):
        pytest.fail("a case whose captures all read should need one pass, not a diff "
                    "per verdict")

    monkeypatch.setattr(runner_module, "diff_captures", one_by_one)
    a = scripted("a", lambda c: ROWS)
    b = scripted("b", lambda c: ROWS + ROWS[:1])
    suite = Runner([a, b], spark=spark, report_dir=tmp_path).run([simple_case()])
    (case,) = suite.cases
    assert [r.diff.observed for r in case.runs] == [SemanticClass.EXACT,
                                                    SemanticClass.AT_LEAST_ONCE]
    assert case.pairs[0].diff.observed is SemanticClass.AT_LEAST_ONCE


def test_a_damaged_capture_is_an_error_of_its_own_run_only(spark, scripted, tmp_path):
    """The shared pass fails on the damaged file; each verdict then diffs alone, so the
    other engine still passes and the error names the file."""

    class Damaging(type(scripted("x", lambda c: []))):
        def run(self, case, **kw):
            output = super().run(case, **kw)
            path = kw["capture_path"] / f"{self.name}.jsonl"
            lines = path.read_text().splitlines(keepends=True)
            path.write_text(lines[0] + "{not a record\n" + "".join(lines[1:]))
            return output

    good, bad = scripted("good", lambda c: ROWS), Damaging("bad", lambda c: ROWS)
    suite = Runner([good, bad], spark=spark, report_dir=tmp_path).run([simple_case()])
    (case,) = suite.cases
    runs = {r.engine: r for r in case.runs}
    assert runs["good"].verdict is Verdict.PASS
    assert runs["bad"].verdict is Verdict.ERROR
    assert "bad.jsonl: 1 line(s) are not capture records" in runs["bad"].reason
    assert case.pairs[0].verdict is Verdict.ERROR
