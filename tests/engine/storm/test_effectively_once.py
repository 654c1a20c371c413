"""EFFECTIVELY_ONCE on the storm engine: checkpoints, whole-topology rollbacks, exactly-once
state and two-phase-commit output despite a task that raises mid-run.

The failure is placed by events, never by time: the spout holds back the second half of
its input until a checkpoint covering the first half is consistent, and the counting bolt
raises a few words after that; so every run restores a real checkpoint and replays.
Components find their test's shared record (``REG``) by the ``test.run`` config key.
"""

from __future__ import annotations

import collections
import tempfile
import time
from pathlib import Path

import pytest

from compat.storm_api import Bolt, Grouping, StatefulComponent, Topology, TwoPhaseCommitBolt
from engine.common.plan.compiler import compile_topology
from engine.common.runtime.errors import LocalEngineError
from engine.config.checkpointing import checkpointing
from engine.statefulstorage import open_storage
from engine.storm import LocalCluster
from engine.storm.checkpoint_store import checkpoint_number
from tests.engine.storm.eo_topologies import (
    HOLD_AT,
    REG,
    SENTENCES,
    CountBolt,
    SentenceSpout,
    SplitBolt,
    WordCount,
    compiled_tasks,
    eo_conf,
    expected_counts,
    final_counts,
    new_run,
    run,
    stored_counts,
)

pytestmark = pytest.mark.timeout(60)

@pytest.mark.parametrize("where", ["count", "split", "sentences"])
def test_word_count_is_exact_despite_a_task_failing_mid_run(tmp_path, where):
    run_id, reg = new_run(fail_in=where, fail_after=5)
    failures = []
    result = run(WordCount, eo_conf(run_id), tmp_path, failures)
    assert result.reason == "finished", result.error
    assert reg["failed"]
    assert any("rolling the topology back" in line for line in failures), failures
    cps = result.checkpoints
    assert cps.rollbacks == 1
    rollback = cps.restores[-1]
    assert f"injected failure in {where}" in rollback.reason
    assert rollback.checkpoint_id, "a checkpoint covering the first half was restored"
    # the spout was rebuilt at the restored position, past the first half
    assert reg["spout_starts"][0] == 0 and reg["spout_starts"][-1] >= HOLD_AT
    assert final_counts(reg) == expected_counts()
    assert stored_counts(WordCount, eo_conf(run_id), tmp_path) == expected_counts()
    # the last count each word reached in the emitted output is exact too
    latest = result.capture.streams[("count", "default")].latest
    assert {k[0]: v for k, v in latest.items()} == dict(expected_counts())
    assert cps.completed >= 2 and cps.last_bytes > 0 and cps.last_duration_secs >= 0
    # stateful tasks only: one spout, two counters
    assert sorted(k.split(":")[0] for k in cps.last_bytes_per_task) == [
        "count", "count", "sentences"]


def test_at_least_once_restarts_only_the_task_and_its_counts_are_lost(tmp_path):
    run_id, reg = new_run(fail_in="count", fail_after=5, hold_at=None)
    result = run(WordCount, {"test.run": run_id, "topology.reliability.mode": "ATLEAST_ONCE"},
                 tmp_path)
    assert result.reason == "finished", result.error
    assert reg["failed"]
    assert result.checkpoints is None
    assert not (tmp_path / "checkpoints").exists()
    assert result.components["count"].restarts == 1
    assert result.components["split"].restarts == 0
    assert reg["spout_starts"] == [0]  # nothing rolled back
    # the restarted task starts from empty counts: what its old instance counted is lost
    latest = result.capture.streams[("count", "default")].latest
    assert sum(latest.values()) < sum(expected_counts().values())


#: the sink's test run: ``commit`` runs in ``init_state``, before ``initialize`` has the conf
SINK_RUN: list[str] = []


class ListSink(TwoPhaseCommitBolt):
    """Writes words to REG's "committed" list through transactions kept in REG
    ("prepared": checkpoint id -> records), as a file sink would through files."""

    outputs = []

    @property
    def reg(self):
        return REG[SINK_RUN[-1]]

    def begin(self):
        self.open = []

    def process(self, tup):
        reg = self.reg
        if reg.get("sink_fail_after") is not None and not reg["sink_failed"] \
                and reg.get("saved_pos", -1) >= reg["hold_at"]:
            reg["sink_seen"] = reg.get("sink_seen", 0) + 1
            if reg["sink_seen"] >= reg["sink_fail_after"]:
                reg["sink_failed"] = True
                raise RuntimeError("injected sink failure")
        self.open.append(tup.values.word)

    def pre_commit(self, checkpoint_id):
        name = f"{checkpoint_id}/{self.task_id}"
        self.reg["prepared"][name] = list(self.open)
        return name

    def commit(self, checkpoint_id, prepared):
        if prepared not in self.reg["committed_names"]:  # idempotent
            self.reg["committed_names"].add(prepared)
            self.reg["committed"].extend(self.reg["prepared"][prepared])

    def abort(self):
        self.reg["aborted"] += 1
        self.open = []


class WordSink(Topology):
    sentences = SentenceSpout.spec()
    split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    sink = ListSink.spec(inputs={split: Grouping.SHUFFLE}, par=2)


def test_two_phase_commit_sink_writes_each_record_exactly_once(tmp_path):
    run_id, reg = new_run(sink_fail_after=7, sink_failed=False, committed_names=set(),
                          aborted=0)
    SINK_RUN.append(run_id)
    result = run(WordSink, eo_conf(run_id), tmp_path)
    assert result.reason == "finished", result.error
    assert reg["sink_failed"]
    assert result.checkpoints.rollbacks == 1
    assert reg["aborted"] >= 1  # the open transactions at the failure were aborted
    # everything committed before the run reported finished, each word exactly once
    assert collections.Counter(reg["committed"]) == expected_counts()


def test_a_second_run_restores_the_last_checkpoint_unless_start_clean(tmp_path):
    run_id, reg = new_run()
    first = run(WordCount, eo_conf(run_id), tmp_path)
    assert first.reason == "finished", first.error
    assert final_counts(reg) == expected_counts()

    # the same state dir: restored at the end of the input, nothing more to count
    run_id2, reg2 = new_run(hold_at=None)
    second = run(WordCount, eo_conf(run_id2), tmp_path)
    assert second.reason == "finished", second.error
    assert second.checkpoints.restores[0].reason == "start"
    assert second.checkpoints.restores[0].checkpoint_id == first.checkpoints.last_checkpoint_id
    assert reg2["spout_starts"] == [len(SENTENCES)]
    assert stored_counts(WordCount, eo_conf(run_id2), tmp_path) == expected_counts()

    # start clean: empty state, the input counted once more from the start
    run_id3, reg3 = new_run(hold_at=None)
    third = run(WordCount, eo_conf(run_id3, **{"topology.stateful.start.clean": True}),
                tmp_path)
    assert third.reason == "finished", third.error
    assert third.checkpoints.restores == []
    assert reg3["spout_starts"] == [0]
    assert final_counts(reg3) == expected_counts()
    assert stored_counts(WordCount, eo_conf(run_id3), tmp_path) == expected_counts()


def test_a_corrupted_newest_checkpoint_falls_back_to_the_one_before(tmp_path):
    run_id, reg = new_run()
    first = run(WordCount, eo_conf(run_id), tmp_path)
    assert first.reason == "finished", first.error
    compiled = compile_topology(WordCount, config=eo_conf(run_id))
    storage = open_storage(checkpointing(eo_conf(run_id)), topology_name=compiled.plan.name,
                           working_dir=tmp_path)
    kept = sorted(storage.checkpoints(), key=checkpoint_number)
    assert len(kept) >= 2
    newest, previous = kept[-1], kept[-2]
    victim = (
        storage.root / newest / "count" / f"{compiled_tasks(storage, newest, 'count')[0]}.state"
    )
    blob = bytearray(victim.read_bytes())
    blob[-1] ^= 0xFF
    victim.write_bytes(bytes(blob))
    before = stored_counts(WordCount, eo_conf(run_id), tmp_path, previous)

    run_id2, reg2 = new_run(hold_at=None)
    second = run(WordCount, eo_conf(run_id2), tmp_path)
    assert second.reason == "finished", second.error
    start = second.checkpoints.restores[0]
    assert start.checkpoint_id == previous
    assert len(start.skipped) == 1 and newest in start.skipped[0]
    assert "corrupt" in start.skipped[0]
    # the run went on from the older checkpoint: its counts, then the rest of the input
    assert sum(before.values()) <= sum(expected_counts().values())
    assert final_counts(reg2) == expected_counts()


class BlockingSplit(SplitBolt):
    """Holds its first tuple until the checkpointer has abandoned a checkpoint that could
    not drain (the test's ``cluster``), as a slow bolt under backpressure would."""

    def process(self, tup):
        reg = self.reg
        if not reg.get("blocked"):
            reg["blocked"] = True
            stats = reg["cluster"].checkpointer.stats
            for _ in range(2000):
                if stats.timed_out:
                    break
                time.sleep(0.005)
        super().process(tup)


class SlowWordCount(Topology):
    sentences = SentenceSpout.spec()
    split = BlockingSplit.spec(inputs={sentences: Grouping.SHUFFLE})
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)


def test_a_checkpoint_that_cannot_drain_times_out_and_a_later_one_completes(tmp_path):
    run_id, reg = new_run(hold_at=None)
    conf = eo_conf(run_id, **{"topology.stateful.checkpoint.timeout.secs": 0.1})
    compiled = compile_topology(SlowWordCount, config=conf)
    with tempfile.TemporaryDirectory(prefix="storm-eo-logs-") as logs:
        cluster = LocalCluster(compiled, log_dir=Path(logs), state_dir=tmp_path)
        reg["cluster"] = cluster
        result = cluster.run(time_limit=30)  # starts it, stops it
    assert result.reason == "finished", result.error
    cps = result.checkpoints
    assert cps.timed_out >= 1 and cps.abandoned >= cps.timed_out
    assert cps.completed >= 1 and cps.rollbacks == 0
    assert final_counts(reg) == expected_counts()


class TickingCount(CountBolt):
    """Counts ticks in state too: ticks stop while a checkpoint drains and saves."""

    def process(self, tup):
        if tup.stream == "__tick":
            self.counts["__ticks"] = self.counts.get("__ticks", 0) + 1
            return
        super().process(tup)

    def post_save(self, checkpoint_id):
        counts = dict(self.counts)
        counts.pop("__ticks", None)
        self.reg["final"][self.task_id] = counts


class TickingWordCount(Topology):
    sentences = SentenceSpout.spec()
    split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    count = TickingCount.spec(inputs={split: Grouping.fields("word")}, par=2,
                              config={"topology.tick.tuple.freq.secs": 0.01,
                                      "topology.tasks": 4})


def test_tick_tuples_and_a_failure_with_several_tasks_per_executor(tmp_path):
    run_id, reg = new_run(fail_in="count", fail_after=3)
    result = run(TickingWordCount, eo_conf(run_id), tmp_path)
    assert result.reason == "finished", result.error
    assert result.checkpoints.rollbacks == 1
    assert final_counts(reg) == expected_counts()


class FailingHooksCount(CountBolt):
    """Raises once in pre_save (after the first half is covered), and its rebuilt
    instance once in initialize: each failure is one more rollback, nothing more."""

    def initialize(self, conf, ctx):
        super().initialize(conf, ctx)
        reg = self.reg
        if reg.get("pre_save_failed") and not reg.get("init_failed"):
            reg["init_failed"] = True
            raise RuntimeError("injected failure in initialize")

    def pre_save(self, checkpoint_id):
        reg = self.reg
        if reg.get("saved_pos", -1) >= reg["hold_at"] and not reg.get("pre_save_failed"):
            reg["pre_save_failed"] = True
            raise RuntimeError("injected failure in pre_save")


class FailingHooksWordCount(Topology):
    sentences = SentenceSpout.spec()
    split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    count = FailingHooksCount.spec(inputs={split: Grouping.fields("word")}, par=2)


def test_failures_in_pre_save_and_in_initialize_during_the_rebuild_roll_back(tmp_path):
    run_id, reg = new_run()
    failures = []
    result = run(FailingHooksWordCount, eo_conf(run_id), tmp_path, failures)
    assert result.reason == "finished", result.error
    assert reg["pre_save_failed"] and reg["init_failed"]
    reasons = [r.reason for r in result.checkpoints.restores]
    assert len(reasons) == 2, reasons
    assert "raised in pre_save" in reasons[0] and "failed to initialize" in reasons[1]
    assert result.checkpoints.abandoned >= 1
    assert final_counts(reg) == expected_counts()


class CommitOnceFailingSink(ListSink):
    """Its first commit raises after making the transaction visible (as a sink whose
    connection drops after the write): the rollback commits it again, idempotently."""

    def commit(self, checkpoint_id, prepared):
        super().commit(checkpoint_id, prepared)
        reg = self.reg
        if reg.get("saved_pos", -1) >= reg["hold_at"] and not reg["sink_failed"]:
            reg["sink_failed"] = True
            raise RuntimeError("injected failure in commit")


class CommitFailingWordSink(Topology):
    sentences = SentenceSpout.spec()
    split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    sink = CommitOnceFailingSink.spec(inputs={split: Grouping.SHUFFLE}, par=2)


def test_a_commit_failing_in_post_save_is_committed_again_once(tmp_path):
    run_id, reg = new_run(sink_failed=False, committed_names=set(), aborted=0)
    SINK_RUN.append(run_id)
    result = run(CommitFailingWordSink, eo_conf(run_id), tmp_path)
    assert result.reason == "finished", result.error
    assert reg["sink_failed"]
    rollback = result.checkpoints.restores[-1]
    assert "raised in post_save" in rollback.reason
    assert collections.Counter(reg["committed"]) == expected_counts()


TwoCounters = WordCount


def test_a_stateful_component_with_other_tasks_than_its_checkpoint_is_refused(tmp_path):
    run_id, reg = new_run(hold_at=None)
    first = run(TwoCounters, eo_conf(run_id), tmp_path)
    assert first.reason == "finished", first.error

    class WordCount(Topology):  # the same topology name, one more counting task
        sentences = SentenceSpout.spec()
        split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
        count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=3)

    run_id2, _ = new_run(hold_at=None)
    # per-task counts (a dict of ints, no rescale_state) cannot be shared out: refused
    with pytest.raises(LocalEngineError, match="'count' keeps per-task state that is not lists"
                                               ".* holds 2 task.* this run has 3.* start clean"):
        run(WordCount, eo_conf(run_id2), tmp_path)
    started_clean = run(WordCount, eo_conf(run_id2, **{"topology.stateful.start.clean": True}),
                        tmp_path)
    assert started_clean.reason == "finished", started_clean.error


def test_state_follows_its_component_when_another_component_gets_more_tasks(tmp_path):
    run_id, reg = new_run(hold_at=None)
    first = run(TwoCounters, eo_conf(run_id), tmp_path)
    assert first.reason == "finished", first.error

    class WordCount(Topology):  # the same name; a new bolt shifts every task id
        sentences = SentenceSpout.spec()
        audit = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
        split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
        count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)

    run_id2, reg2 = new_run(hold_at=None)
    second = run(WordCount, eo_conf(run_id2), tmp_path)
    assert second.reason == "finished", second.error
    assert (set(second.checkpoints.last_bytes_per_task)
            != set(first.checkpoints.last_bytes_per_task))
    assert reg2["spout_starts"] == [len(SENTENCES)]
    assert final_counts(reg2) == expected_counts()


class KeyedCountBolt(CountBolt):
    """Counts in keyed state: they move with their words when the parallelism changes."""

    def init_state(self, state):
        self.counts = state.keyed()


def test_keyed_counts_follow_their_words_to_another_parallelism(tmp_path):
    """A second run of the same topology with three counting tasks instead of two (and
    more sentences) restores each word's count in the task that now owns its key group:
    the counts over both runs' sentences are exact."""
    class Keyed(Topology):
        sentences = SentenceSpout.spec()
        split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
        count = KeyedCountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)

    run_id, reg = new_run(hold_at=None)
    first = run(Keyed, eo_conf(run_id), tmp_path)
    assert first.reason == "finished", first.error
    assert final_counts(reg) == expected_counts()

    class KeyedWider(Topology):  # the same name, one more counting task
        sentences = SentenceSpout.spec()
        split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
        count = KeyedCountBolt.spec(inputs={split: Grouping.fields("word")}, par=3)

    more = ["the fox runs", "a new dog barks twice", "the end"]
    run_id2, reg2 = new_run(hold_at=None, sentences=list(SENTENCES) + more)
    second = run(KeyedWider, eo_conf(run_id2), tmp_path)
    assert second.reason == "finished", second.error
    assert len(reg2["final"]) == 3
    want = collections.Counter(w for s in list(SENTENCES) + more for w in s.split())
    assert final_counts(reg2) == want


class FlushingBolt(StatefulComponent, Bolt):
    """Holds the words it gets in its state and emits them in ``pre_save``: each checkpoint
    flushes what its interval brought, as a batching or windowing bolt does."""

    outputs = ["word"]

    def init_state(self, state):
        self.state = state

    def initialize(self, conf, ctx):
        self.reg = REG[conf["test.run"]]

    def process(self, tup):
        self.state["held"] = list(self.state.get("held", [])) + [tup.values.word]

    def pre_save(self, checkpoint_id):
        held = list(self.state.get("held", []))
        for word in held:
            self.emit([word])
        self.state["held"] = []
        self.reg["flushed"] = self.reg.get("flushed", 0) + len(held)


class FlushedWordCount(Topology):
    # "count" numbers its tasks before "flush": the hooks still run upstream first
    sentences = SentenceSpout.spec()
    split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    flush = FlushingBolt.spec(inputs={split: Grouping.SHUFFLE}, par=2)
    count = CountBolt.spec(inputs={flush: Grouping.fields("word")}, par=2)


def test_a_bolt_emitting_in_pre_save_completes_its_checkpoints_and_each_word_counts_once(
        tmp_path):
    run_id, reg = new_run()
    result = run(FlushedWordCount, eo_conf(run_id), tmp_path)
    assert result.reason == "finished", result.error
    cps = result.checkpoints
    assert reg["flushed"] == sum(expected_counts().values())  # every word went through
    assert cps.abandoned == 0 and cps.completed >= 2
    assert final_counts(reg) == expected_counts()
    assert stored_counts(FlushedWordCount, eo_conf(run_id), tmp_path) == expected_counts()
    latest = result.capture.streams[("count", "default")].latest
    assert {k[0]: v for k, v in latest.items()} == dict(expected_counts())


class FlushedWordSink(Topology):
    # "commit" numbers its tasks before "flush": its pre_commit must still come after
    # what "flush" emitted in the same checkpoint's pre_save was written into it
    sentences = SentenceSpout.spec()
    split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    flush = FlushingBolt.spec(inputs={split: Grouping.SHUFFLE}, par=2)
    commit = ListSink.spec(inputs={flush: Grouping.SHUFFLE}, par=2)


def test_what_a_bolt_emits_in_pre_save_is_committed_exactly_once_despite_a_rollback(
        tmp_path):
    run_id, reg = new_run(sink_fail_after=7, sink_failed=False, committed_names=set(),
                          aborted=0)
    SINK_RUN.append(run_id)
    result = run(FlushedWordSink, eo_conf(run_id), tmp_path)
    assert result.reason == "finished", result.error
    assert reg["sink_failed"] and result.checkpoints.rollbacks == 1
    assert result.checkpoints.completed >= 2
    assert collections.Counter(reg["committed"]) == expected_counts()
