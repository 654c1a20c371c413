"""FileSink: readers see committed transactions only, each record exactly once, also when a
commit is repeated after a crash; aborted and crashed transactions never show."""

from __future__ import annotations

import json

import pytest

from compat.connectors import (
    ConnectorConfigError,
    FileSink,
    FileSpout,
    committed_files,
    read_committed,
)
from compat.storm_api.exceptions import ComponentFailure
from compat.storm_api.state import HashMapState
from compat.storm_api.testing import BoltHarness, SpoutHarness
from tests.compat.connectors.helpers import checkpoint, with_state

DIR = "heron.connectors.file.sink.dir"
SOURCES = {"spout": ["word", "n"]}


def sink(out, state=None, cls=FileSink):
    return BoltHarness(with_state(cls, HashMapState() if state is None else state),
                       conf={DIR: str(out)}, sources=SOURCES, task_id=7)


def visible(out):
    return [json.loads(line) for line in read_committed(out)]


def test_records_show_only_once_their_checkpoint_is_committed(tmp_path):
    out = tmp_path / "out"
    with sink(out) as s:
        s.process(["a", 1])
        s.process(["b", 2])
        assert visible(out) == []  # written, not committed
        saved_1 = checkpoint(s.component, "ckpt-1")
        assert visible(out) == []  # prepared, not yet consistent across the topology
        s.process(["c", 3])  # the next transaction, begun at once
        s.component.post_save("ckpt-1")
        assert visible(out) == [["a", 1], ["b", 2]]
        assert [p.name for p in committed_files(out)] == ["part-7-ckpt-1.jsonl"]
        assert s.acked == ["1", "2", "3"]
    assert saved_1  # holds the prepared transaction


def test_an_aborted_transaction_never_shows(tmp_path):
    out = tmp_path / "out"
    with sink(out) as s:
        s.process(["a", 1])
        checkpoint(s.component, "ckpt-1")
        s.component.post_save("ckpt-1")
        s.process(["lost", 0])
        s.component.pre_restore("ckpt-1")  # a rollback: the open transaction is aborted
    assert visible(out) == [["a", 1]]
    assert sorted(p.name for p in out.iterdir()) == ["part-7-ckpt-1.jsonl"]


def test_a_commit_repeated_after_a_crash_gives_each_record_once(tmp_path):
    out = tmp_path / "out"
    with sink(out) as s:
        s.process(["a", 1])
        saved = checkpoint(s.component, "ckpt-1")
        s.component.post_save("ckpt-1")  # committed, then the process dies
        s.process(["after", 9])  # never checkpointed: must never show
    with sink(out, HashMapState(dict(saved))) as restored:  # commit runs again
        assert visible(out) == [["a", 1]]
        restored.process(["again", 9])  # and this process dies too, before ckpt-2
    with sink(out, HashMapState(dict(saved))) as restored:  # and once more
        assert visible(out) == [["a", 1]]
        restored.process(["b", 2])
        checkpoint(restored.component, "ckpt-2")
        restored.component.post_save("ckpt-2")
    assert visible(out) == [["a", 1], ["b", 2]]
    # the crashed transaction's temporary file was cleaned up by the restore
    assert sorted(p.name for p in out.iterdir()) == ["part-7-ckpt-1.jsonl",
                                                     "part-7-ckpt-2.jsonl"]


def test_a_crash_between_prepare_and_commit_commits_on_restore(tmp_path):
    out = tmp_path / "out"
    with sink(out) as s:
        s.process(["a", 1])
        saved = checkpoint(s.component, "ckpt-1")
        # the checkpoint becomes consistent, but this process dies before post_save
    assert visible(out) == []
    with sink(out, saved):
        assert visible(out) == [["a", 1]]


def test_a_restore_to_an_older_checkpoint_drops_a_newer_prepared_transaction(tmp_path):
    out = tmp_path / "out"
    with sink(out) as s:
        s.process(["a", 1])
        saved_1 = checkpoint(s.component, "ckpt-1")
        s.component.post_save("ckpt-1")
        s.process(["b", 2])
        checkpoint(s.component, "ckpt-2")  # prepared, but ckpt-2 never completes
    with sink(out, saved_1) as s:
        assert visible(out) == [["a", 1]]
        # the orphan goes once the first checkpoint after the restore is consistent:
        # only then has every task committed what its restored state held
        checkpoint(s.component, "ckpt-3")
        s.component.post_save("ckpt-3")
    assert visible(out) == [["a", 1]]
    assert [p.name for p in out.iterdir()] == ["part-7-ckpt-1.jsonl"]


def test_an_empty_transaction_writes_no_file(tmp_path):
    out = tmp_path / "out"
    with sink(out) as s:
        checkpoint(s.component, "ckpt-1")
        s.component.post_save("ckpt-1")
    assert list(out.iterdir()) == []


def test_format_tuple_is_the_hook_for_another_line_format(tmp_path):
    class Csv(FileSink):
        def format_tuple(self, tup):
            return ",".join(str(v) for v in tup.values)

    out = tmp_path / "out"
    with sink(out, cls=Csv) as s:
        s.process(["a", 1])
        checkpoint(s.component, "ckpt-4")
        s.component.post_save("ckpt-4")
    assert read_committed(out) == ["a,1"]


def test_a_missing_directory_setting_names_the_key(tmp_path):
    with pytest.raises(ComponentFailure) as failure:
        BoltHarness(FileSink, sources=SOURCES)
    assert isinstance(failure.value.__cause__, ConnectorConfigError)
    assert "'heron.connectors.file.sink.dir' is required" in str(failure.value.__cause__)


def run_pipeline(inputs, out, crash_after_calls, crash_stage):
    """FileSpout -> FileSink driven as an engine would (checkpoint every 2 spout calls),
    with one crash; returns what readers see at the end."""
    spout_conf = {"heron.connectors.file.path": str(inputs), "heron.connectors.file.batch.lines": 2}
    consistent = {"spout": HashMapState(), "sink": HashMapState()}
    crashed = False
    number = 0
    while True:
        spout = SpoutHarness(with_state(FileSpout, HashMapState(dict(consistent["spout"]))),
                             conf=spout_conf)
        sinker = sink(out, HashMapState(dict(consistent["sink"])))
        calls = 0
        try:
            while not spout.is_exhausted():
                for emit in spout.next_tuple():
                    sinker.process([emit.values[0], 0])
                calls += 1
                if calls % 2 == 0 or spout.is_exhausted():
                    number += 1
                    cid = f"ckpt-{number}"
                    saved = {"spout": checkpoint(spout.component, cid),
                             "sink": checkpoint(sinker.component, cid)}
                    if not crashed and calls >= crash_after_calls and crash_stage == "saved":
                        crashed = True
                        raise RuntimeError("crash before the checkpoint is recorded")
                    consistent = saved
                    if not crashed and calls >= crash_after_calls and crash_stage == "consistent":
                        crashed = True
                        raise RuntimeError("crash before post_save")
                    sinker.component.post_save(cid)
                if not crashed and calls >= crash_after_calls and crash_stage == "running":
                    crashed = True
                    raise RuntimeError("crash mid-interval")
            return visible(out)
        except RuntimeError:
            continue  # a restore: fresh components from the newest consistent checkpoint
        finally:
            spout.close()
            sinker.close()


@pytest.mark.parametrize("stage", ["running", "saved", "consistent"])
@pytest.mark.parametrize("crash_after", [1, 2, 3, 5])
def test_spout_to_sink_with_a_crash_gives_every_line_exactly_once(tmp_path, stage, crash_after):
    inputs = tmp_path / "in.txt"
    lines = [f"line {i}" for i in range(13)]
    inputs.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    assert run_pipeline(inputs, out, crash_after, stage) == [[line, 0] for line in lines]
    assert all(not p.name.startswith(".") for p in out.iterdir())
