"""The generated spout and bolts, one task at a time (no engine): caches, acks, replays."""

from __future__ import annotations

import pytest

from compat.storm_api.exceptions import ComponentFailure
from compat.storm_api.testing import BoltHarness, SpoutHarness
from compat.summingbird import (
    CacheSize,
    CollectorSink,
    FlushFrequency,
    Options,
    SQLiteStore,
    source,
)
from compat.summingbird.monoids import Semigroup, Sum
from compat.summingbird.platforms.streaming import RunSettings, plan_streaming, serial
from compat.summingbird.platforms.streaming.ledger import merged_lineages
from compat.summingbird.platforms.streaming.spool import SpoolWriter, read_spool
from compat.summingbird.platforms.streaming.topology import component_class
from compat.summingbird.sqlite import encode_key
from compat.summingbird.testing import delta_of, words_of

FIELDS = ["key", "payload"]


def chained_plan(store, cache=3, semigroup=None):
    """source -> flat_map -> summer (cache of ``cache`` keys) -> map_values+write."""
    job = (source(["unused"]).flat_map(words_of)
           .sum_by_key(store, semigroup or Sum()).name("counts")
           .map_values(delta_of).write(CollectorSink()))
    options = {"counts": Options(CacheSize(cache, 0.0), FlushFrequency(0.5))}
    return plan_streaming(job, options)


def summer_harness(plan, run, conf=None):
    node = plan.node("sum_by_key-2-counts")
    return BoltHarness(component_class(node, run), conf=conf, component_name=node.name,
                       sources={"flat_map-1": FIELDS})


def word(w, *lineage):
    return [encode_key(w, ""), serial.dumps(((0, *lineage), (w, 1)))]


def outputs(harness):
    return [serial.loads(values[1]) for values in harness.values()]


@pytest.fixture
def run(tmp_path):
    return RunSettings(run_id="scope-1", spool_dir=str(tmp_path / "spool"),
                       error_dir=str(tmp_path / "errors"))


def test_the_summer_cache_flushes_when_it_holds_cache_size_keys(tmp_path, run):
    store = SQLiteStore(tmp_path / "s.db")
    bolt = summer_harness(chained_plan(store), run)
    ids = [bolt.process(word(w, i, 0)).id for i, w in enumerate(["a", "b", "a"])]
    assert store.contents() == {} and bolt.acked == [] and bolt.values() == []

    ids.append(bolt.process(word("c", 3, 0)).id)  # the third key: flush
    assert store.contents() == {"a": 2, "b": 1, "c": 1}
    assert bolt.acked == ids
    assert outputs(bolt) == [((0, 0, 0), ("a", (None, 1))), ((0, 1, 0), ("b", (None, 1))),
                             ((0, 2, 0), ("a", (1, 1))), ((0, 3, 0), ("c", (None, 1)))]
    assert [e.anchors for e in bolt.emits] == [[i] for i in ids]


def test_a_tick_flushes_whatever_the_cache_holds(tmp_path, run):
    store = SQLiteStore(tmp_path / "s.db")
    bolt = summer_harness(chained_plan(store), run)
    tup = bolt.process(word("a", 0, 0))
    assert store.contents() == {}
    tick = bolt.tick()
    assert store.contents() == {"a": 1}
    assert bolt.acked == [tick.id, tup.id]


def test_a_replay_after_the_merge_committed_is_not_merged_again_but_re_emitted(tmp_path, run):
    store = SQLiteStore(tmp_path / "s.db")
    plan = chained_plan(store, cache=0)
    first = summer_harness(plan, run)
    first.process(word("a", 0, 0))
    first.process(word("a", 1, 0))
    assert store.contents() == {"a": 2}
    # The task dies before its acks reach the spout: both trees time out and replay into a
    # fresh task, which finds the lineages in the ledger.
    again = summer_harness(plan, run)
    replayed = [again.process(word("a", 0, 0)).id, again.process(word("a", 1, 0)).id]
    assert store.contents() == {"a": 2}
    assert again.acked == replayed
    assert outputs(again) == [((0, 0, 0), ("a", (None, 1))), ((0, 1, 0), ("a", (1, 1)))]
    assert sorted(r[1] for r in merged_lineages(store, "scope-1")) == ["0,0,0", "0,1,0"]
    # Another run (another scope) counts the same input again, as the memory platform does.
    other = summer_harness(plan, RunSettings(run_id="scope-2"))
    other.process(word("a", 0, 0))
    assert store.contents() == {"a": 3}


def test_a_replay_that_arrives_while_the_first_copy_is_cached_is_merged_once(tmp_path, run):
    store = SQLiteStore(tmp_path / "s.db")
    bolt = summer_harness(chained_plan(store, cache=5), run)
    original = bolt.process(word("a", 7, 0))
    replay = bolt.process(word("a", 7, 0))
    bolt.tick()
    assert store.contents() == {"a": 1}
    assert set(bolt.acked) >= {original.id, replay.id}
    (emit,) = bolt.emits
    assert emit.anchors == [original.id, replay.id]  # downstream work is tracked by both trees


def test_at_most_once_turns_the_cache_off(tmp_path, run):
    store = SQLiteStore(tmp_path / "s.db")
    bolt = summer_harness(chained_plan(store, cache=100), run,
                          conf={"topology.acker.executors": 0})
    bolt.process(word("a", 0, 0))
    assert store.contents() == {"a": 1}


def exploding_plus(a, b):
    raise ValueError("no way")


def test_an_error_in_the_semigroup_fails_the_cached_inputs_and_names_the_node(tmp_path, run):
    store = SQLiteStore(tmp_path / "s.db")
    store.put_all({"a": 1})
    plan = chained_plan(store, cache=2, semigroup=Semigroup.of(exploding_plus, commutative=True))
    bolt = summer_harness(plan, run)
    held = bolt.process(word("b", 0, 0))
    with pytest.raises(ComponentFailure):
        bolt.process(word("a", 1, 0))
    assert bolt.failed == [held.id, "2"] and bolt.acked == []
    assert store.contents() == {"a": 1}  # the transaction rolled back
    (report,) = (tmp_path / "errors").iterdir()
    assert report.name == "sum_by_key-2-counts.1"
    text = report.read_text()
    assert text.startswith("ValueError: no way (in Summingbird node 'sum_by_key' (node ")
    assert "test_components.py:" in text


def test_the_spout_emits_element_indices_as_ids_and_replays_failed_ones(run):
    def odd(n: int) -> bool:
        return n % 2 == 1

    plan = plan_streaming(source([1, 2, 3, 4, 5]).filter(odd).write(CollectorSink()))
    node = plan.node("source-0")
    spout = SpoutHarness(component_class(node, run), component_name=node.name)
    emits = spout.next_tuple(n=4)  # three emits, then the end of the source
    assert [(e.tup_id, serial.loads(e.values[1])) for e in emits] == [
        (0, ((0, 0), 1)), (2, ((0, 2), 3)), (4, ((0, 4), 5))]
    assert not spout.is_exhausted()  # read everything, but nothing is acked yet
    spout.ack(0)
    spout.ack(4)
    spout.fail(2)
    (replay,) = spout.next_tuple()
    assert replay.tup_id == 2 and replay.values == emits[1].values
    spout.ack(2)
    assert spout.is_exhausted()


def test_the_spout_gives_up_on_an_element_after_max_replays_and_reports_it(tmp_path):
    run = RunSettings(run_id="s", error_dir=str(tmp_path / "errors"), max_replays=1)
    plan = plan_streaming(source(["x"]).write(CollectorSink()))
    node = plan.node("source-0")
    spout = SpoutHarness(component_class(node, run), component_name=node.name)
    spout.next_tuple()
    spout.fail(0)
    spout.next_tuple()
    spout.fail(0)
    assert spout.next_tuple() == [] and spout.is_exhausted()
    (report,) = (tmp_path / "errors").iterdir()
    assert "element 0 failed 2 times" in report.read_text()


def test_spools_keep_one_record_per_lineage_in_lineage_order(tmp_path):
    first = SpoolWriter(tmp_path, "write-1", 3)
    first.write("w1", serial.dumps(((0, 2), "c")))
    first.write("w1", serial.dumps(((0, 0), "a")))
    first.flush()
    second = SpoolWriter(tmp_path, "write-1", 4)
    second.write("w1", serial.dumps(((0, 2), "c")))  # a replay of the same element
    second.write("w1", serial.dumps(((0, 1), "b")))
    second.write("w12", serial.dumps(((0, 9), "other sink")))
    second.close()
    first.close()
    with open(next(tmp_path.glob("w1.write-1.4.*")), "ab") as handle:
        handle.write(b"\x00\x00\x01\x00trunc")  # a process killed mid-record
    assert read_spool(tmp_path, "w1") == ["a", "b", "c"]
    assert read_spool(tmp_path, "w12") == ["other sink"]
