"""FileSink: the clean-up of a crashed process's temporary files spares the transactions
the task's state still holds as prepared, so they are committed later, after a crash
too; a prepared transaction whose files are not in the configured directory (a
savepoint started with another sink directory, output moved away) stops the task with a
message saying what happened and what to do, and nothing is dropped."""

from __future__ import annotations

import json

import pytest

from compat.connectors import FileSink, read_committed
from compat.storm_api.exceptions import ComponentFailure
from compat.storm_api.state import PENDING_TRANSACTIONS_KEY, HashMapState
from compat.storm_api.testing import BoltHarness
from tests.compat.connectors.helpers import checkpoint

DIR = "heron.connectors.file.sink.dir"
SOURCES = {"spout": ["word", "n"]}


def sink(out, state=None):
    return BoltHarness(FileSink, conf={DIR: str(out)}, sources=SOURCES, task_id=7,
                       state=HashMapState() if state is None else HashMapState(dict(state)))


def visible(out):
    return [json.loads(line) for line in read_committed(out)]


def test_a_transaction_prepared_before_the_first_post_save_is_committed_later(tmp_path):
    out = tmp_path / "out"
    with sink(out) as s:
        s.process(["a", 1])
        checkpoint(s.component, "ckpt-1")
        s.process(["b", 2])
        checkpoint(s.component, "ckpt-2")  # saved before ckpt-1's post_save reached the task
        s.component.post_save("ckpt-1")  # the first after the start: the orphan clean-up
        assert visible(out) == [["a", 1]]
        s.component.post_save("ckpt-2")
        assert visible(out) == [["a", 1], ["b", 2]]
    assert sorted(p.name for p in out.iterdir()) == ["part-7-ckpt-1.jsonl",
                                                     "part-7-ckpt-2.jsonl"]


def test_a_prepared_transaction_survives_the_clean_up_and_a_crash(tmp_path):
    out = tmp_path / "out"
    with sink(out) as s:
        s.process(["a", 1])
        checkpoint(s.component, "ckpt-1")
        s.process(["b", 2])
        saved_2 = checkpoint(s.component, "ckpt-2")
        s.component.post_save("ckpt-1")
        # ckpt-2 is consistent, but the process dies before its post_save
    with sink(out, saved_2) as restored:  # the restore commits ckpt-2
        assert visible(out) == [["a", 1], ["b", 2]]
        restored.process(["c", 3])
        checkpoint(restored.component, "ckpt-3")
        restored.component.post_save("ckpt-3")
    assert visible(out) == [["a", 1], ["b", 2], ["c", 3]]
    assert not [p for p in out.iterdir() if p.name.endswith(".inprogress")]


def test_a_savepoint_started_with_another_sink_directory_says_so_and_drops_nothing(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    with sink(before) as s:
        s.process(["a", 1])
        s.process(["b", 2])
        saved = checkpoint(s.component, "ckpt-4")  # the savepoint: prepared, not committed
    temp = saved[PENDING_TRANSACTIONS_KEY]["ckpt-4"]["temp"]
    with pytest.raises(ComponentFailure) as failure:
        sink(after, saved)
    message = str(failure.value.__cause__)
    for part in ("ckpt-4", "2 records", temp, "part-7-ckpt-4.jsonl", repr(str(after)),
                 repr(str(before)), "heron.connectors.file.sink.dir", "savepoint",
                 "moved", "temporary file still is"):
        assert part in message, part
    assert (before / temp).exists() and read_committed(after) == []  # nothing dropped
    with sink(before, saved):  # started again with the savepoint's directory: committed
        assert visible(before) == [["a", 1], ["b", 2]]


def test_a_prepared_transaction_whose_files_were_moved_away_says_so(tmp_path):
    out = tmp_path / "out"
    with sink(out) as s:
        s.process(["a", 1])
        saved = checkpoint(s.component, "ckpt-2")
    (out / saved[PENDING_TRANSACTIONS_KEY]["ckpt-2"]["temp"]).rename(tmp_path / "elsewhere")
    with pytest.raises(ComponentFailure) as failure:
        sink(out, saved)
    message = str(failure.value.__cause__)
    assert "checkpoint ckpt-2" in message and "prepared in this directory" in message
    assert "moved" in message and repr(str(out)) in message
