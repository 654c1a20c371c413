"""KafkaSpout under EFFECTIVELY_ONCE, against a real broker: positions saved at a
checkpoint and sought back to on restore, a rescale 2 -> 3 -> 1 that loses and repeats
nothing, and LATEST resolved once per submission so a rollback to empty state skips
nothing. The engine's part (save the state, build a new component from it) is done as
tests/compat/connectors/helpers.py does it."""

from __future__ import annotations

import time

from compat.connectors.kafka import KafkaSpout
from compat.storm_api.config import RELIABILITY_MODE_KEY
from tests.compat.connectors.helpers import checkpoint, roundtrip
from tests.compat.connectors.kafka.kafka_helpers import host_spout, idle, produce, pull, spout_conf


def eo_conf(bootstrap, topic, **settings):
    return spout_conf(bootstrap, topic, **{RELIABILITY_MODE_KEY: "EFFECTIVELY_ONCE"},
                      **settings)


def records_of(emits):
    return [(e.values[0], e.values[1], e.values[2]) for e in emits]


def test_restore_seeks_back_to_the_checkpointed_positions(kafka_broker, kafka_topic):
    topic = kafka_topic(2)
    produce(kafka_broker.bootstrap, topic, [(p, None, f"{p}-{i}") for p in range(2)
                                            for i in range(5)])
    conf = eo_conf(kafka_broker.bootstrap, topic)
    first = host_spout(conf)
    try:
        before = pull(first, 10)
        assert all(e.tup_id is None for e in before)  # acking is off
        state = checkpoint(first.component, "ckpt-1")
        produce(kafka_broker.bootstrap, topic, [(p, None, f"{p}-{i}") for p in range(2)
                                                for i in range(5, 10)])
        after = pull(first, 10)  # emitted after the checkpoint: lost with the failure
        assert len(after) == 10
    finally:
        first.close()
    restored = host_spout(conf, state=state)
    try:
        replay = pull(restored, 10)
        assert sorted(records_of(before + replay)) == sorted(
            (topic, p, i) for p in range(2) for i in range(10))
        assert sorted(records_of(replay)) == sorted(records_of(after))
        assert idle(restored, 0.2) == []
    finally:
        restored.close()


def _stage(conf, states, tasks, take):
    """Run ``tasks`` spout tasks from ``states`` until ``take`` records came, then
    checkpoint them all; returns (emitted records, new states)."""
    harnesses = [host_spout(conf, index=i, tasks=tasks, state=roundtrip(states[i]))
                 for i in range(tasks)]
    try:
        got: list = []
        deadline = time.monotonic() + 10
        while len(got) < take and time.monotonic() < deadline:
            for h in harnesses:
                got += records_of(h.next_tuple())
        return got, [checkpoint(h.component, "ckpt-x") for h in harnesses]
    finally:
        for h in harnesses:
            h.close()


def test_rescale_2_3_1_loses_and_repeats_nothing(kafka_broker, kafka_topic):
    """Each stage reads what was written before it, then checkpoints; the next stage,
    with the parallelism changed, starts from the rescaled states."""
    topic = kafka_topic(6)
    write = lambda first: produce(kafka_broker.bootstrap, topic, [  # noqa: E731
        (p, None, str(i)) for p in range(6) for i in range(first, first + 5)])
    conf = eo_conf(kafka_broker.bootstrap, topic)
    write(0)
    got1, states = _stage(conf, [{}, {}], 2, 30)
    write(5)
    got2, states = _stage(conf, KafkaSpout.rescale_state(states, 3), 3, 30)
    write(10)
    got3, _ = _stage(conf, KafkaSpout.rescale_state(states, 1), 1, 30)
    assert (len(got1), len(got2), len(got3)) == (30, 30, 30)
    everything = got1 + got2 + got3
    assert len(everything) == len(set(everything))
    assert set(everything) == {(topic, p, i) for p in range(6) for i in range(15)}


def test_latest_is_resolved_once_per_submission(kafka_broker, kafka_topic):
    """LATEST under EFFECTIVELY_ONCE: a rollback to empty state (before any checkpoint)
    starts where the submission first started, not at the end again; a new submission
    (another storm.id) takes the end afresh."""
    topic = kafka_topic(1)
    produce(kafka_broker.bootstrap, topic, [(0, None, "old")], one_batch_each=True)
    conf = eo_conf(kafka_broker.bootstrap, topic, storm_id="wc-1-111",
                   spout_first_poll_offset_strategy="LATEST")
    first = host_spout(conf)
    try:
        assert idle(first, 0.3) == []
        produce(kafka_broker.bootstrap, topic, [(0, None, "new1"), (0, None, "new2")],
                one_batch_each=True)
        assert [e.values[4] for e in pull(first, 2)] == ["new1", "new2"]
    finally:
        first.close()
    rolled_back = host_spout(conf)  # empty state, same submission
    try:
        assert [e.values[4] for e in pull(rolled_back, 2)] == ["new1", "new2"]
    finally:
        rolled_back.close()
    resubmitted = host_spout(eo_conf(kafka_broker.bootstrap, topic, storm_id="wc-2-222",
                                     spout_first_poll_offset_strategy="LATEST"))
    try:
        assert idle(resubmitted, 0.3) == []
    finally:
        resubmitted.close()
