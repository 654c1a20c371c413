"""Sentences from a Redis stream (the shipped stream spout, its position in state) to
counts in a Redis hash (the shipped sink), effectively-once."""

from e2e_stateful_parts import CountBolt, CountHash, SentenceStream, SplitBolt

from compat.storm_api import Grouping, Topology


class StreamCounts(Topology):
    config = {"topology.workers": 2, "topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 0.5,
              "heron.connectors.redis.stream.count": 20,
              "heron.connectors.redis.stream.end.field": "end",
              "heron.connectors.redis.sink.kind": "hash"}
    sentences = SentenceStream.spec()
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    counts = CountHash.spec(inputs={count: Grouping.fields("word")})
