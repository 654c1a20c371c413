"""The storm engine on small inline topologies: groupings, failures, acking."""

from __future__ import annotations

import collections
import tempfile
from pathlib import Path

import pytest

from compat.storm_api import Bolt, Grouping, ReliableSpout, Stream, Topology
from engine.common.plan.compiler import compile_topology
from engine.storm import LocalCluster, OutputCapture
from tests.engine.storm.engine_topologies import NumberSpout, run_topology

pytestmark = pytest.mark.timeout(60)


class TaskTagBolt(Bolt):
    outputs = ["task", "n"]

    def process(self, tup):
        self.emit([self.task_id, tup.values.n])


run = run_topology


def tagged(result, component="tag"):
    return result.capture.streams[(component, "default")].tuples


def test_all_grouping_with_three_tasks_gives_three_copies():
    class T(Topology):
        nums = NumberSpout.spec()
        tag = TaskTagBolt.spec(inputs={nums: Grouping.ALL}, par=3)

    result = run(T)
    assert result.reason == "finished"
    per_task = collections.defaultdict(list)
    for task, n in tagged(result):
        per_task[task].append(n)
    assert len(per_task) == 3
    assert all(sorted(ns) == list(range(30)) for ns in per_task.values())


def test_global_grouping_reaches_only_lowest_task():
    class T(Topology):
        nums = NumberSpout.spec()
        tag = TaskTagBolt.spec(inputs={nums: Grouping.GLOBAL}, par=3)

    result = run(T)
    tasks = {task for task, _ in tagged(result)}
    # __acker is task 1, nums is 2, tag is 3..5 (Storm numbers components in sorted order)
    assert tasks == {3}
    assert len(tagged(result)) == 30


def test_fields_grouping_sends_each_key_to_exactly_one_task():
    class KeySpout(NumberSpout):
        outputs = ["n"]

        def next_tuple(self):
            if self.i < self.limit:
                self.emit([self.i % 7])
                self.i += 1

    class T(Topology):
        keys = KeySpout.spec()
        tag = TaskTagBolt.spec(inputs={keys: Grouping.fields("n")}, par=3)

    result = run(T, {"test.limit": 300})
    owners = collections.defaultdict(set)
    for task, key in tagged(result):
        owners[key].add(task)
    assert set(owners) == set(range(7))
    assert all(len(tasks) == 1 for tasks in owners.values())


def test_shuffle_spreads_over_every_task():
    class T(Topology):
        nums = NumberSpout.spec()
        tag = TaskTagBolt.spec(inputs=[nums], par=3)

    counts = collections.Counter(task for task, _ in tagged(run(T)))
    assert sorted(counts.values()) == [10, 10, 10]


def test_direct_grouping_reaches_the_named_task():
    class DirectSpout(NumberSpout):
        outputs = [Stream(["n"], direct=True)]

        def initialize(self, conf, ctx):
            super().initialize(conf, ctx)
            self.targets = sorted(int(t) for t, c in ctx["task->component"].items() if c == "tag")

        def next_tuple(self):
            if self.i < self.limit:
                task = self.targets[self.i % 2]
                got = self.emit([task], direct_task=task, need_task_ids=True)
                assert got == [task]
                self.i += 1

    class T(Topology):
        nums = DirectSpout.spec()
        tag = TaskTagBolt.spec(inputs={nums: Grouping.DIRECT}, par=2)

    result = run(T)
    assert all(task == wanted for task, wanted in tagged(result))
    assert len(tagged(result)) == 30


def test_a_bolt_that_raises_is_reported_in_one_line_and_restarted():
    class Flaky(Bolt):
        outputs = ["task", "n"]

        def process(self, tup):
            if tup.values.n == 5:
                raise ZeroDivisionError("boom on 5")
            self.emit([self.task_id, tup.values.n])

    class T(Topology):
        nums = NumberSpout.spec()
        tag = Flaky.spec(inputs=[nums])

    failures = []
    result = run(T, failures=failures)
    assert result.reason == "finished"
    assert len(failures) == 1
    assert "'tag'" in failures[0] and "ZeroDivisionError: boom on 5" in failures[0]
    assert result.components["tag"].restarts == 1
    assert sorted(n for _, n in tagged(result)) == [n for n in range(30) if n != 5]


def test_a_value_that_cannot_be_serialized_names_component_and_stream():
    class Bad(Bolt):
        outputs = ["task", "n"]

        def process(self, tup):
            self.emit([self.task_id, object()])

    class T(Topology):
        nums = NumberSpout.spec()
        tag = Bad.spec(inputs=[nums])

    failures = []
    run(T, {"test.limit": 1}, failures=failures)
    assert failures and "component 'tag' stream 'default'" in failures[0]
    assert "cannot encode" in failures[0]


def test_emitting_to_an_undeclared_stream_is_reported():
    class Wrong(Bolt):
        outputs = ["task", "n"]

        def process(self, tup):
            self.emit([1, 2], stream="nope")

    class T(Topology):
        nums = NumberSpout.spec()
        tag = Wrong.spec(inputs=[nums])

    failures = []
    run(T, {"test.limit": 1}, failures=failures)
    assert "undeclared stream 'nope'" in failures[0]


class IdSpout(ReliableSpout):
    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.i = 0
        self.limit = conf.get("test.limit", 40)
        self.acked_ids = set()
        self.failed_ids = collections.Counter()

    def next_tuple(self):
        if self.i < self.limit:
            self.emit([self.i], tup_id=self.i)
            self.i += 1

    def ack(self, tup_id):
        self.acked_ids.add(tup_id)
        super().ack(tup_id)
        self.report_metric("acked", sorted(self.acked_ids))

    def fail(self, tup_id):
        self.failed_ids[tup_id] += 1
        self.report_metric("failed", dict(self.failed_ids))
        super().fail(tup_id)

    def is_exhausted(self):
        return self.i >= self.limit


def run_collecting_metrics(topology_cls, conf):
    compiled = compile_topology(topology_cls, config=conf)
    capture = OutputCapture(keep_all=True)
    with tempfile.TemporaryDirectory(prefix="storm-test-logs-") as logs, \
            LocalCluster(compiled, capture=capture, log_dir=Path(logs)) as cluster:
        result = cluster.run(time_limit=30)
        metrics = {k[0]: v for k, v in cluster.metrics.items()}
    return result, metrics


def test_failed_tuples_reach_the_spout_and_replays_are_eventually_acked():
    class FailFirstTime(Bolt):
        outputs = ["task", "n"]

        def initialize(self, conf, ctx):
            self.seen = set()

        def process(self, tup):
            n = tup.values.n
            if n % 7 == 0 and n not in self.seen:
                self.seen.add(n)
                raise_fail = True
            else:
                raise_fail = False
            if raise_fail:
                self.fail(tup)
                return
            self.emit([self.task_id, n])
            self.ack(tup)

        auto_ack = False
        auto_fail = False

    class T(Topology):
        nums = IdSpout.spec()
        tag = FailFirstTime.spec(inputs=[nums])

    result, metrics = run_collecting_metrics(T, {"test.limit": 40})
    assert result.reason == "finished"
    assert metrics["nums"]["acked"] == list(range(40))
    assert set(metrics["nums"]["failed"]) == {0, 7, 14, 21, 28, 35}
    assert sorted(n for _, n in tagged(result)) == list(range(40))


def test_dropped_tuples_time_out_and_are_replayed():
    class DropFirstTime(Bolt):
        outputs = ["task", "n"]
        auto_ack = False

        def initialize(self, conf, ctx):
            self.seen = set()

        def process(self, tup):
            n = tup.values.n
            if n % 5 == 0 and n not in self.seen:
                self.seen.add(n)
                return  # neither acked nor failed: the root must time out
            self.emit([self.task_id, n])
            self.ack(tup)

    class T(Topology):
        nums = IdSpout.spec()
        tag = DropFirstTime.spec(inputs=[nums])

    result, metrics = run_collecting_metrics(
        T, {"test.limit": 20, "topology.message.timeout.secs": 1})
    assert result.reason == "finished"
    assert metrics["nums"]["acked"] == list(range(20))
    assert set(metrics["nums"]["failed"]) == {0, 5, 10, 15}


def test_zero_ackers_ack_every_tracked_emit_at_once():
    class T(Topology):
        nums = IdSpout.spec()
        tag = TaskTagBolt.spec(inputs=[nums])

    result, metrics = run_collecting_metrics(
        T, {"test.limit": 25, "topology.acker.executors": 0})
    assert metrics["nums"]["acked"] == list(range(25))
    assert result.components["nums"].acked == 25


def test_max_spout_pending_bounds_tuples_in_flight():
    class Slow(Bolt):
        outputs = ["task", "n"]

        def process(self, tup):
            import time
            time.sleep(0.002)
            self.emit([self.task_id, tup.values.n])

    class T(Topology):
        nums = IdSpout.spec()
        tag = Slow.spec(inputs=[nums])

    result, metrics = run_collecting_metrics(
        T, {"test.limit": 200, "topology.max.spout.pending": 5})
    assert result.reason == "finished"
    assert max(result.max_spout_pending_seen.values()) <= 5
    assert metrics["nums"]["acked"] == list(range(200))


def test_unreliable_emits_are_never_acked_or_failed():
    class T(Topology):
        nums = NumberSpout.spec()
        tag = TaskTagBolt.spec(inputs=[nums])

    result = run(T)
    assert result.components["nums"].acked == 0 and result.components["nums"].failed == 0


def test_a_component_whose_initialize_always_raises_is_crash_looping_at_the_time_limit():
    class Broken(Bolt):
        outputs = ["n"]

        def initialize(self, conf, ctx):
            raise KeyError("missing.setting")

        def process(self, tup):
            pass

    class T(Topology):
        nums = NumberSpout.spec()
        broken = Broken.spec(inputs=[nums])

    failures = []
    result = run(T, {"heron.executor.restart.backoff.initial.ms": 20,
                     "heron.executor.restart.backoff.max.ms": 40}, time_limit=1.5,
                 failures=failures)
    assert result.reason == "error"
    assert "crash-looping" in result.error and "'broken'" in result.error
    [(what, error)] = result.crash_looping.items()
    assert what.startswith("component 'broken' task") and error == "KeyError: 'missing.setting'"
    assert result.components["broken"].crash_looping == 1
    assert len(failures) > 3 and "failed to initialize" in failures[0]


def test_acker_tasks_are_numbered_like_storm_tasks():
    class T(Topology):
        nums = NumberSpout.spec()
        tag = TaskTagBolt.spec(inputs=[nums])

    compiled = compile_topology(T, config={"topology.acker.executors": 2})
    with tempfile.TemporaryDirectory(prefix="storm-test-logs-") as logs, \
            LocalCluster(compiled, log_dir=Path(logs)) as cluster:
        assert cluster.layout.tasks_by_component["__acker"] == [1, 2]
        assert sorted(cluster.runtime.acker_tasks) == [1, 2]
