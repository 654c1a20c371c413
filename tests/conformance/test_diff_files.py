"""Capture files as the differ reads them: typed values kept apart, a cut-short last line
from a killed writer dropped and noted, more than that an error naming the file; the
report shows the inputs and the Spark job's time; the progress line."""

from __future__ import annotations

import pytest

from conformance.capture import CaptureFormatError, CaptureWriter, read_capture
from conformance.diff import diff_captures
from conformance.model import Comparison, SemanticClass
from conformance.report.junit import _diff_text
from conformance.report.text import describe_inputs
from conformance.spark_progress import describe_stages
from conformance.typed_json import decode, encode

pytestmark = pytest.mark.timeout(180)

VALUES = [1, 1.0, True, (1, "a"), [1, "a"], b"\x00\xff", "00ff", {2, 1}, frozenset({3}),
          {(1, 2): "tuple key"}, {"$bytes": "not a tag"}, float("inf"), None, {"a": [1]}]


def write(path, rows, engine="storm"):
    with CaptureWriter(path, engine=engine, case="c", run_id=f"{engine}-1") as writer:
        for values in rows:
            writer.write("bolt", "default", 1, values)
    return path


def test_typed_values_round_trip_exactly():
    back = decode(encode(VALUES))
    assert back == VALUES
    assert [type(v) for v in back] == [type(v) for v in VALUES]


def test_typed_read_keeps_what_a_consumer_saw(tmp_path):
    path = write(tmp_path / "c.jsonl", [VALUES], )
    (typed,) = read_capture(path, typed=True)
    assert typed["values"] == VALUES
    assert type(typed["values"][3]) is tuple and type(typed["values"][1]) is float


def test_int_and_float_rows_differ_but_tuples_and_lists_compare_equal(spark, tmp_path):
    left = write(tmp_path / "l.jsonl", [[1, (2, 3)], ["x", b"\x01"]])
    same = write(tmp_path / "r.jsonl", [["x", b"\x01"], [1, [2, 3]]], engine="heron")
    floats = write(tmp_path / "f.jsonl", [[1.0, (2, 3)], ["x", b"\x01"]], engine="heron")
    assert diff_captures(spark, [left], [same], Comparison(), left="storm",
                         right="heron").observed is SemanticClass.EXACT
    result = diff_captures(spark, [left], [floats], Comparison(), left="storm",
                           right="heron")
    assert result.observed is SemanticClass.DIVERGENT
    assert [s.row[2] for s in result.samples] == [1, 1.0]


def test_a_cut_short_last_line_is_dropped_and_noted(spark, tmp_path):
    left = write(tmp_path / "l.jsonl", [["a", 1], ["b", 2], ["c", 3]])
    right = write(tmp_path / "r.jsonl", [["a", 1], ["b", 2]], engine="heron")
    with open(right, "a", encoding="utf-8") as fh:  # a writer killed mid-line
        fh.write('{"engine":"heron","case":"c","run_id":"heron-1","component":"bo')
    assert len(list(read_capture(right))) == 2
    result = diff_captures(spark, [left], [right], Comparison(), left="storm",
                           right="heron")
    assert result.observed is SemanticClass.AT_MOST_ONCE
    assert result.counts.missing == 1
    assert any(str(right) in note and "cut-short" in note for note in result.notes)


def test_more_than_one_bad_line_in_a_file_is_an_error_naming_it(spark, tmp_path):
    left = write(tmp_path / "l.jsonl", [["a", 1]])
    right = tmp_path / "r.jsonl"
    right.write_text("{nope\n[1]\n")
    with pytest.raises(CaptureFormatError, match=f"^{right}: 2 line"):
        diff_captures(spark, [left], [right], Comparison(), left="storm", right="heron")


def test_one_unreadable_line_in_the_middle_is_an_error_naming_the_line(spark, tmp_path):
    """Not a cut-short last line: a line with records after it (and its newline) means
    the file was damaged, and diffing without it would hide a lost row."""
    left = write(tmp_path / "l.jsonl", [["a", 1], ["b", 2], ["c", 3]])
    right = write(tmp_path / "r.jsonl", [["a", 1], ["b", 2], ["c", 3]], engine="heron")
    lines = right.read_text().splitlines(keepends=True)
    right.write_text(lines[0] + lines[1][:25] + "\n" + lines[2])
    with pytest.raises(CaptureFormatError, match=f"^{right}: 1 line.*the first: {right}:2: "):
        diff_captures(spark, [left], [right], Comparison(), left="storm", right="heron")


def test_the_result_carries_inputs_and_the_spark_time_for_the_report(spark, tmp_path):
    left = write(tmp_path / "l.jsonl", [["a", 1], ["b", 2]])
    right = write(tmp_path / "r.jsonl", [["a", 1]], engine="heron")
    lines = []
    result = diff_captures(spark, [left], [right], Comparison(), left="storm",
                           right="heron", progress=lines.append)
    assert result.inputs["storm"] == {"files": 1, "bytes": left.stat().st_size, "rows": 2}
    assert result.inputs["heron"]["rows"] == 1
    assert result.spark_seconds > 0
    line = describe_inputs(result)
    assert line.startswith("storm: 2 rows, 1 file(s), ") and "Spark job" in line
    assert f"inputs: {line}" in _diff_text(result, None)
    assert all(text.startswith("heron vs storm: stage ") for text in lines)


def test_several_streams_have_counts_and_rows_each(spark):
    def rec(component, *values):
        return {"component": component, "stream": "default", "values": list(values)}

    left = [rec("a", 1), rec("b", 1), rec("b", 2)]
    right = [rec("a", 1), rec("a", 1), rec("b", 3)]
    result = diff_captures(spark, left, right, Comparison(), left="x", right="y")
    by_stream = {s["component"]: s for s in result.streams}
    assert (by_stream["a"]["duplicate_extras"], by_stream["b"]["missing"],
            by_stream["b"]["novel_extras"]) == (1, 2, 1)
    assert [s["row"] for s in by_stream["b"]["samples"]] == [
        ["b", "default", 1], ["b", "default", 2], ["b", "default", 3]]


class _Info:
    def __init__(self, total, done, active):
        self.numTasks, self.numCompletedTasks, self.numActiveTasks = total, done, active


class _Tracker:
    def getActiveStageIds(self):
        return [4, 3]

    def getStageInfo(self, stage):
        return {3: _Info(8, 5, 2), 4: _Info(4, 0, 0)}[stage]


def test_the_progress_line_names_each_active_stage():
    assert describe_stages(_Tracker()) == "stage 3: 5/8 tasks (2 running); stage 4: 0/4 tasks"
