"""Captures written by each task as files of their own (one per task process), read by
the diff as a directory; spout message ids in the rows (``msg_id``)."""

from __future__ import annotations

import json
import threading

import pytest

from conformance.capture import (
    CaptureWriter,
    TaskCaptures,
    capture_files,
    open_task_file,
    read_capture,
    task_file_stem,
)
from conformance.catalogue import case_named
from conformance.diff import diff_captures
from conformance.engines import StormAdapter
from conformance.model import Comparison, SemanticClass
from engine.common.serialization import serializer_for_config
from engine.instance.capture import (
    JSONL_CONFIG,
    InstanceCapture,
    JsonlCapture,
    read_jsonl_config,
    write_jsonl_config,
)


def test_a_task_file_is_never_reopened(tmp_path):
    first, fh1 = open_task_file(tmp_path, "count", 3)
    second, fh2 = open_task_file(tmp_path, "count", 3)
    fh1.close()
    fh2.close()
    assert (first.name, second.name) == ("count_3.jsonl", "count_3.1.jsonl")
    # a user's component name never makes a path
    assert task_file_stem("../a b/c", 1) == "-a-b-c_1"


def test_task_captures_write_one_file_per_task_from_many_threads(tmp_path):
    sink = TaskCaptures(tmp_path / "cap", engine="storm", case="c", run_id="r")

    def emit(task: int) -> None:
        for n in range(500):
            sink.write("bolt", "default", task, [n, (n, "x")],
                       message_id=n if task == 1 else None)

    threads = [threading.Thread(target=emit, args=(t,)) for t in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sink.close()
    assert sink.count == 2000
    assert [p.name for p in capture_files(tmp_path / "cap")] == [
        f"bolt_{t}.jsonl" for t in range(1, 5)]
    for task in range(1, 5):
        records = list(read_capture(tmp_path / "cap" / f"bolt_{task}.jsonl", typed=True))
        assert [r["values"] for r in records] == [[n, (n, "x")] for n in range(500)]
        assert all(r["task"] == task for r in records)
        assert [r.get("msg_id") for r in records] == (
            list(range(500)) if task == 1 else [None] * 500)
    with pytest.raises(ValueError, match="closed"):
        sink.write("bolt", "default", 9, [1])


def test_capture_files_of_a_directory_a_glob_and_a_file(tmp_path):
    for name in ("b_2.jsonl", "a_1.jsonl", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    assert [p.name for p in capture_files(tmp_path)] == ["a_1.jsonl", "b_2.jsonl"]
    assert [p.name for p in capture_files(tmp_path / "b_*.jsonl")] == ["b_2.jsonl"]
    assert capture_files(tmp_path / "notes.txt") == [tmp_path / "notes.txt"]
    assert capture_files(tmp_path / "sub") == []


def _instance(directory, task=2):
    serializer = serializer_for_config({})
    return InstanceCapture(directory, "numbers", task, {"default": ("n", "key")},
                           serializer.loads, capture_all=False), serializer


def test_a_heron_instance_writes_its_own_json_lines_file_when_the_run_asks(tmp_path):
    work = tmp_path / "capture"
    out = tmp_path / "out"
    # no request: no file (heron run as ever)
    capture, serializer = _instance(work)
    capture.record("default", [1, "a"], serializer.dumps([1, "a"]))
    capture.close()
    assert not out.exists() and capture_files(work) == []
    write_jsonl_config(work, JsonlCapture(str(out), "heron", "case", "run-1"))
    assert read_jsonl_config(work) == JsonlCapture(str(out), "heron", "case", "run-1")
    capture, serializer = _instance(work)
    for n in range(3):
        values = [n, (n, b"\x00")] if n else [0, "zero"]
        capture.record("default", values, serializer.dumps(values),
                       message_id=n if n != 1 else None)
    capture.write_summary()  # flushes what the file holds so far (before a kill)
    assert len((out / "numbers_2.jsonl").read_text().splitlines()) == 3
    capture.close()
    again, _ = _instance(work)  # the task's process started again: a new file
    again.close()
    assert [p.name for p in capture_files(out)] == ["numbers_2.1.jsonl", "numbers_2.jsonl"]
    records = list(read_capture(out / "numbers_2.jsonl", typed=True))
    # values as a consumer sees them: after the serializer's round trip
    assert [r["values"] for r in records] == [
        serializer.loads(serializer.dumps(v)) for v in
        ([0, "zero"], [1, (1, b"\x00")], [2, (2, b"\x00")])]
    assert [r.get("msg_id") for r in records] == [0, None, 2]
    assert {(r["engine"], r["case"], r["run_id"], r["task"]) for r in records} == {
        ("heron", "case", "run-1", 2)}


def test_a_bad_capture_request_names_its_file(tmp_path):
    (tmp_path / JSONL_CONFIG).write_text(json.dumps({"directory": "x"}))
    with pytest.raises(ValueError, match=f"{JSONL_CONFIG}: not a JSON-lines capture request"):
        read_jsonl_config(tmp_path)


def test_a_capture_directory_with_a_killed_tasks_cut_short_file_diffs(spark, tmp_path):
    """A task killed mid-line leaves its file with one cut-short last line; its next
    process writes a new file. The directory diffs, the line dropped and noted."""
    rows = [[n, f"k{n}"] for n in range(100)]
    left = tmp_path / "left"
    with TaskCaptures(left, engine="a", case="c", run_id="1") as sink:
        for n, row in enumerate(rows):
            sink.write("numbers", "default", 1 + n % 2, row)
    right = tmp_path / "right"
    with CaptureWriter(right, engine="b", case="c", run_id="2",
                       task_of=("numbers", 1)) as killed:
        for row in rows[:30]:
            killed.write("numbers", "default", 1, row)
    with open(killed.path, "a", encoding="utf-8") as fh:
        fh.write('{"engine":"b","case":"c","run_id":"2","compo')  # the kill, mid-line
    with CaptureWriter(right, engine="b", case="c", run_id="2",
                       task_of=("numbers", 1)) as restarted:
        for row in rows[30:]:
            restarted.write("numbers", "default", 1, row)
    assert restarted.path.name == "numbers_1.1.jsonl"
    result = diff_captures(spark, [left], [right], Comparison(), left="a", right="b")
    assert result.observed is SemanticClass.EXACT
    assert result.inputs["a"]["files"] == 2 and result.inputs["b"]["files"] == 2
    assert result.counts.rows_right == 100
    assert f"{killed.path}: 1 cut-short line dropped" in " ".join(result.notes)


@pytest.mark.slow
def test_the_storm_engine_fills_the_spouts_message_ids(tmp_path):
    out = StormAdapter().run(case_named("reliable_spout_failing_bolt"), run_id="r",
                             capture_path=tmp_path / "capture", work_dir=tmp_path / "work")
    assert out.finished, out.error
    records = list(read_capture(out.capture, typed=True))
    spouted = [r for r in records if r["component"] == "numbers"]
    assert spouted and all(r["msg_id"] == r["values"][0] for r in spouted)
    assert all("msg_id" not in r for r in records if r["component"] != "numbers")
    # a replayed tuple is the same message again
    assert len(spouted) > len({r["msg_id"] for r in spouted})


def test_a_missing_capture_is_named_before_spark_reads_anything(spark, tmp_path):
    from conformance.capture import CaptureFormatError

    with pytest.raises(CaptureFormatError, match=r"nope: no such capture file or directory"):
        diff_captures(spark, [tmp_path / "nope"], [tmp_path], Comparison(), left="a",
                      right="b")
