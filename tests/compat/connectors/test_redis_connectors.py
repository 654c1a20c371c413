"""RedisStreamSpout and RedisSink against a real redis-server (tests/redis_server.py)."""

from __future__ import annotations

import json

import pytest
import redis

from compat.connectors import ConnectorConfigError, RedisSink, RedisStreamSpout
from compat.storm_api.exceptions import ComponentFailure
from compat.storm_api.state import HashMapState
from compat.storm_api.testing import BoltHarness, SpoutHarness
from tests.compat.connectors.helpers import checkpoint, with_state

URL = "heron.connectors.redis.url"
STREAM = "heron.connectors.redis.stream.key"


@pytest.fixture
def client(redis_url):
    c = redis.Redis.from_url(redis_url, decode_responses=True)
    yield c
    c.close()


def fill(client, n, key="events"):
    return [client.xadd(key, {"word": f"w{i}", "n": str(i)}) for i in range(n)]


class Words(RedisStreamSpout):
    outputs = ["word", "n"]


def spout(conf, state=None, cls=Words):
    return SpoutHarness(with_state(cls, HashMapState() if state is None else state), conf=conf)


# -- the spout -------------------------------------------------------------------------

def test_the_spout_emits_the_configured_fields_in_order_and_ends_when_drained(client, redis_url):
    fill(client, 7)
    conf = {URL: redis_url, STREAM: "events", "heron.connectors.redis.stream.count": 3,
            "heron.connectors.redis.stream.finite": True}
    with spout(conf) as s:
        assert [e.values for e in s.drain()] == [[f"w{i}", str(i)] for i in range(7)]
        assert s.is_exhausted()
    assert client.xlen("events") == 7  # read, never consumed: a replay finds them again


def test_by_default_the_spout_emits_entry_id_and_all_fields(client, redis_url):
    ids = fill(client, 2)
    conf = {URL: redis_url, STREAM: "events", "heron.connectors.redis.stream.finite": True}
    with spout(conf, cls=RedisStreamSpout) as s:
        assert [e.values for e in s.drain()] == [
            [ids[0], {"word": "w0", "n": "0"}], [ids[1], {"word": "w1", "n": "1"}]]


@pytest.mark.parametrize("count", [1, 2, 5])
def test_a_restored_spout_goes_on_from_exactly_the_next_entry(client, redis_url, count):
    fill(client, 9)
    conf = {URL: redis_url, STREAM: "events", "heron.connectors.redis.stream.count": count,
            "heron.connectors.redis.stream.finite": True}
    for calls in range(0, 9 // count + 2):
        with spout(conf) as first:
            before = first.next_tuple(calls)
            saved = checkpoint(first.component, "ckpt-1")
            first.next_tuple(2)  # lost with the crash
        with spout(conf, saved) as restored:
            after = restored.drain()
        assert [e.values[0] for e in before + after] == [f"w{i}" for i in range(9)], calls


def test_an_unbounded_spout_waits_for_new_entries(client, redis_url):
    conf = {URL: redis_url, STREAM: "events", "heron.connectors.redis.stream.block.ms": 10}
    with spout(conf) as s:
        assert s.next_tuple(2) == [] and not s.is_exhausted()
        fill(client, 1)
        assert [e.values for e in s.next_tuple()] == [["w0", "0"]]


def test_an_end_marker_ends_the_stream_also_after_a_restore(client, redis_url):
    fill(client, 2)
    client.xadd("events", {"eof": "1"})
    fill(client, 1)  # after the marker: never read
    conf = {URL: redis_url, STREAM: "events", "heron.connectors.redis.stream.end.field": "eof"}
    with spout(conf) as s:
        assert [e.values[0] for e in s.drain()] == ["w0", "w1"]
        saved = checkpoint(s.component, "ckpt-2")
    with spout(conf, saved) as restored:
        assert restored.is_exhausted() and restored.next_tuple() == []


def test_start_dollar_skips_what_is_there_and_the_restore_is_exact(client, redis_url):
    fill(client, 3)
    conf = {URL: redis_url, STREAM: "events", "heron.connectors.redis.stream.start": "$",
            "heron.connectors.redis.stream.finite": True}
    with spout(conf) as s:
        saved = checkpoint(s.component, "ckpt-1")
    client.xadd("events", {"word": "new", "n": "9"})
    with spout(conf, saved) as restored:
        assert [e.values[0] for e in restored.drain()] == ["new"]


@pytest.mark.parametrize("conf, message", [
    ({}, "'heron.connectors.redis.stream.key' is required"),
    ({STREAM: "s", "heron.connectors.redis.stream.block.ms": 5000}, "at most 1000"),
    ({STREAM: "s", "heron.connectors.redis.stream.finite": "maybe"}, "must be true or false"),
    ({STREAM: "s", URL: "nope://x"}, "'heron.connectors.redis.url'"),
])
def test_malformed_spout_config_names_the_key(redis_url, conf, message):
    with pytest.raises(ComponentFailure) as failure:
        SpoutHarness(RedisStreamSpout, conf={URL: redis_url, **conf})
    assert isinstance(failure.value.__cause__, ConnectorConfigError)
    assert message in str(failure.value.__cause__)


def test_parallel_tasks_need_a_stream_per_task(redis_url, client):
    context = {"task->component": {"1": "events", "2": "events"}, "streams": ["default"],
               "stream->outputfields": {"default": ["word", "n"]}, "componentid": "events"}
    conf = {URL: redis_url, STREAM: "events"}
    with pytest.raises(ComponentFailure) as failure:
        SpoutHarness(Words, conf=conf, context={**context, "taskid": 1}, component_name="events")
    assert "{task_index}" in str(failure.value.__cause__)
    fill(client, 1, key="events-1")
    conf = {URL: redis_url, STREAM: "events-{task_index}",
            "heron.connectors.redis.stream.finite": True}
    with SpoutHarness(Words, conf=conf, context={**context, "taskid": 2},
                      component_name="events", task_id=2) as s:
        assert [e.values for e in s.drain()] == [["w0", "0"]]


# -- the sink --------------------------------------------------------------------------

SOURCES = {"spout": ["word", "n"]}


def sink(redis_url, kind, state=None, **extra):
    conf = {URL: redis_url, "heron.connectors.redis.sink.key": "out",
            "heron.connectors.redis.sink.kind": kind, **extra}
    return BoltHarness(with_state(RedisSink, HashMapState() if state is None else state),
                       conf=conf, sources=SOURCES, component_name="counter", task_id=3)


def read(client, kind):
    if kind == "list":
        return [json.loads(v) for v in client.lrange("out", 0, -1)]
    return client.hgetall("out")


def test_list_appends_show_only_when_committed_with_the_fence(client, redis_url):
    with sink(redis_url, "list") as s:
        s.process(["a", 1])
        s.process(["b", 2])
        checkpoint(s.component, "ckpt-1")
        assert read(client, "list") == []  # another client sees nothing before the commit
        s.process(["c", 3])
        s.component.post_save("ckpt-1")
        assert read(client, "list") == [["a", 1], ["b", 2]]
        assert client.hgetall("fence:counter:3") == {"checkpoint": "ckpt-1", "number": "1",
                                                     "records": "2"}


@pytest.mark.parametrize("kind, expected", [
    ("list", [["a", 1], ["b", 2], ["a", 3]]),
    ("hash", {"a": "3", "b": "2"}),
    ("hincrby", {"a": "4", "b": "2"}),
])
def test_a_commit_repeated_after_a_crash_writes_each_record_once(client, redis_url, kind,
                                                                 expected):
    with sink(redis_url, kind) as s:
        s.process(["a", 1])
        s.process(["b", 2])
        saved_1 = checkpoint(s.component, "ckpt-1")
        s.component.post_save("ckpt-1")  # committed; then the process dies
        s.process(["lost", 5])  # never checkpointed
    for _ in range(2):  # restored twice from the same state: the commit runs again
        with sink(redis_url, kind, HashMapState(dict(saved_1))):
            pass
    with sink(redis_url, kind, HashMapState(dict(saved_1))) as s:
        s.process(["a", 3])
        saved_2 = checkpoint(s.component, "ckpt-2")  # consistent; dies before post_save
    assert read(client, kind) == (expected[:2] if kind == "list" else
                                  {"a": "1", "b": "2"})
    with sink(redis_url, kind, HashMapState(dict(saved_2))):
        pass  # the restore commits ckpt-2
    with sink(redis_url, kind, HashMapState(dict(saved_2))):
        pass  # and again: nothing changes
    assert read(client, kind) == expected


def test_an_aborted_transaction_writes_nothing(client, redis_url):
    with sink(redis_url, "hincrby") as s:
        s.process(["a", 1])
        s.component.pre_restore("ckpt-0")
        checkpoint(s.component, "ckpt-1")
        s.component.post_save("ckpt-1")
    assert client.exists("out") == 0
    assert client.exists("fence:counter:3") == 0  # an empty transaction is not even sent


def test_to_write_is_the_hook_for_what_is_written(client, redis_url):
    class Upper(RedisSink):
        def to_write(self, tup):
            return [tup.values.word.upper()]

    with BoltHarness(with_state(Upper, HashMapState()), sources=SOURCES, conf={
            URL: redis_url, "heron.connectors.redis.sink.key": "out"}) as s:
        s.process(["a", 1])
        checkpoint(s.component, "ckpt-1")
        s.component.post_save("ckpt-1")
    assert client.lrange("out", 0, -1) == ["A"]


@pytest.mark.parametrize("conf, message", [
    ({}, "'heron.connectors.redis.sink.key' is required"),
    ({"heron.connectors.redis.sink.key": "k", "heron.connectors.redis.sink.kind": "set"},
     "must be one of list, hash, hincrby"),
])
def test_malformed_sink_config_names_the_key(redis_url, conf, message):
    with pytest.raises(ComponentFailure) as failure:
        BoltHarness(RedisSink, conf={URL: redis_url, **conf}, sources=SOURCES)
    assert isinstance(failure.value.__cause__, ConnectorConfigError)
    assert message in str(failure.value.__cause__)


def test_stream_to_redis_sink_with_crashes_counts_every_entry_exactly_once(client, redis_url):
    """RedisStreamSpout -> RedisSink (hincrby), restored after a crash at each point of a
    checkpoint: the counts equal the input's."""
    words = [f"w{i % 4}" for i in range(25)]
    for word in words:
        client.xadd("events", {"word": word, "n": "1"})
    spout_conf = {URL: redis_url, STREAM: "events", "heron.connectors.redis.stream.count": 2,
                  "heron.connectors.redis.stream.finite": True}
    for crash_at in range(1, 9):
        client.delete("out", "fence:counter:3")
        consistent = {"spout": HashMapState(), "sink": HashMapState()}
        number, crashed = 0, False
        while True:
            s = spout(spout_conf, HashMapState(dict(consistent["spout"])))
            k = sink(redis_url, "hincrby", HashMapState(dict(consistent["sink"])))
            try:
                calls = 0
                while not s.is_exhausted():
                    for emit in s.next_tuple():
                        k.process(emit.values)
                    calls += 1
                    if not crashed and calls == crash_at and crash_at % 3 == 0:
                        crashed = True
                        raise RuntimeError("crash mid-interval")
                    if calls % 2 == 0 or s.is_exhausted():
                        number += 1
                        cid = f"ckpt-{number}"
                        saved = {"spout": checkpoint(s.component, cid),
                                 "sink": checkpoint(k.component, cid)}
                        consistent = saved
                        if not crashed and calls == crash_at:
                            crashed = True
                            raise RuntimeError("crash before post_save")
                        k.component.post_save(cid)
                break
            except RuntimeError:
                continue
            finally:
                s.close()
                k.close()
        expected = {w: str(words.count(w)) for w in set(words)}
        assert client.hgetall("out") == expected, crash_at
