"""RedisStreamSpout with ``stream.start: $`` under EFFECTIVELY_ONCE, against a real
redis-server: ``$`` is resolved once, when the task first starts, and kept in Redis, so a
rollback to empty state (a failure before the first consistent checkpoint) emits again
what was emitted before it, and what arrived meanwhile; entries there before the first
start stay skipped."""

from __future__ import annotations

import pytest
import redis

from compat.connectors import RedisStreamSpout
from compat.storm_api.state import HashMapState
from compat.storm_api.testing import SpoutHarness

CONF = {"heron.connectors.redis.stream.key": "events",
        "heron.connectors.redis.stream.start": "$",
        "topology.reliability.mode": "EFFECTIVELY_ONCE",
        "topology.name": "words", "storm.id": "words-1-100"}


class Words(RedisStreamSpout):
    outputs = ["word"]


@pytest.fixture
def client(redis_url):
    c = redis.Redis.from_url(redis_url, decode_responses=True)
    yield c
    c.close()


def add(client, *words):
    for word in words:
        client.xadd("events", {"word": word})


def spout(redis_url, **conf):
    """A task started with empty state: its first start, or a rollback to empty state."""
    return SpoutHarness(Words, conf={**CONF, "heron.connectors.redis.url": redis_url, **conf},
                        component_name="events", state=HashMapState())


def words(task, calls=3):
    return [e.values[0] for e in task.next_tuple(calls)]


def test_a_rollback_to_empty_state_emits_again_what_came_after_the_first_start(client,
                                                                                 redis_url):
    add(client, "old0", "old1")  # there before the topology: skipped, as $ says
    with spout(redis_url) as first:
        add(client, "w1", "w2", "w3")
        assert words(first) == ["w1", "w2", "w3"]
        # no checkpoint is consistent yet: a failure rolls back to empty state
        first.component.pre_restore("")
    add(client, "w4")  # arrived meanwhile
    with spout(redis_url) as again:
        assert words(again) == ["w1", "w2", "w3", "w4"]
    with spout(redis_url) as and_again:  # and a second rollback gives the same
        assert words(and_again) == ["w1", "w2", "w3", "w4"]


def test_a_rollback_before_anything_arrived_replays_what_arrived_since(client, redis_url):
    with spout(redis_url) as first:  # an empty stream: $ is its beginning
        assert words(first) == []
    add(client, "w1", "w2")
    with spout(redis_url) as again:
        assert words(again) == ["w1", "w2"]


def test_the_resolved_start_is_kept_per_submission_and_component(client, redis_url):
    add(client, "old0")
    with spout(redis_url) as first:
        key = first.component.start_record_key()
        assert words(first) == []
    assert key == "heron:stream.start:words-1-100:events:0:events"
    assert client.get(key) == client.xrevrange("events", "+", "-", count=1)[0][0]
    add(client, "w1")
    # the same topology submitted again (after a kill): a first start of its own
    with spout(redis_url, **{"storm.id": "words-2-200"}) as other:
        add(client, "w2")
        assert words(other) == ["w2"]
    with spout(redis_url) as again:
        assert words(again) == ["w1", "w2"]


def test_in_other_modes_a_restarted_task_takes_dollar_again_and_stores_nothing(client,
                                                                             redis_url):
    mode = {"topology.reliability.mode": "ATLEAST_ONCE"}
    add(client, "old0")
    with spout(redis_url, **mode) as first:
        add(client, "w1")
        assert words(first) == ["w1"]
    add(client, "w2")
    with spout(redis_url, **mode) as again:
        assert words(again) == []
    assert client.keys("heron:*") == []
