"""A hot key: a spout offering a rate the test controls, 90% of its ids with one key, into
a fields-grouped bolt of parallelism 3 that sleeps 5 ms per tuple. The instance that gets
the hot key cannot keep up while its peers idle: the Health Manager must report data
skew naming that instance, and not scale (more instances would not split the key)."""

from autoscale_parts import HotKeySpout, KeyedWords, Ledger

from compat.storm_api import Grouping, Topology


class Hotkey(Topology):
    config = {
        "topology.workers": 2, "topology.acker.executors": 1,
        "topology.message.timeout.secs": 10,
        "heron.streammgr.network.backpressure.highwatermark.mb": 0.02,
        "heron.streammgr.network.backpressure.lowwatermark.mb": 0.01,
        "heron.topology.healthmgr.mode": "cluster",
        "heron.class.health.policies": ["dynamic-resource-allocation"],
        "heron.healthmgr.max.parallelism": 6,
        "dynamic-resource-allocation": {
            "health.policy.interval.ms": 2000,
            "health.policy.window.ms": 10000,
            "health.policy.post.action.wait.ms": 15000,
        },
        "e2e.hot_share": 0.9,
    }
    source = HotKeySpout.spec(par=1)
    slow = KeyedWords.spec(inputs={source: Grouping.fields("key")}, par=3)
    sink = Ledger.spec(inputs={slow: Grouping.SHUFFLE}, par=1)
