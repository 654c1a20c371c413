"""A spout offering a rate the test controls, a shuffle-grouped bolt of parallelism 1
that cannot keep up, and a sink: the Health Manager must scale the bolt up, and back
down when the rate drops. Short policy settings so the test fits in two minutes."""

from autoscale_parts import Ledger, RateSpout, SlowWords

from compat.storm_api import Grouping, Topology


class Autoscale(Topology):
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
    }
    source = RateSpout.spec(par=1)
    slow = SlowWords.spec(inputs={source: Grouping.SHUFFLE}, par=1)
    sink = Ledger.spec(inputs={slow: Grouping.SHUFFLE}, par=1)
