"""The chaos soak's topology (bench/chaos.py): a replayable sentence spout (2 tasks, one
corpus partition each, durable position), a splitting bolt (2 tasks, shuffle) and a
de-duplicating sink (2 tasks, fields-grouped on the id), at-least-once over 2
containers. Container 0 runs a Health Manager too (``heron.topology.healthmgr.mode``),
so that the monkey can kill one; its one policy is deactivated, so it watches and never
rescales the topology under the monkey's feet. Settings the bench passes with ``-o``:
``chaos.dir`` (the durable files), ``chaos.rate`` (ids/s offered in all), ``chaos.seed``
(the corpus)."""

from chaos_parts import DedupSink, SentenceSpout, SplitSentence

from compat.storm_api import Grouping, Topology


class ChaosWordCount(Topology):
    config = {
        "topology.workers": 2,
        "topology.acker.executors": 1,
        "topology.message.timeout.secs": 10,
        "topology.max.spout.pending": 1000,
        "heron.topology.healthmgr.mode": "cluster",
        "heron.class.health.policies": ["dynamic-resource-allocation"],
        "dynamic-resource-allocation": {
            "health.policy.mode": "deactivated",
            "health.policy.interval.ms": 5000,
            "health.policy.window.ms": 10000,
        },
    }
    sentences = SentenceSpout.spec(par=2)
    split = SplitSentence.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    sink = DedupSink.spec(inputs={split: Grouping.fields("id")}, par=2)
