"""A flaky instance: a shuffle-grouped bolt of parallelism 3, fast (1 ms per tuple) but
for one instance that turns slow (50 ms per tuple) after 300 tuples, until its process is
restarted. Only the auto-restart policy runs, activated: it must restart that
instance's container once, and the restarted instance is fast.

Placement (round robin over 2 containers, components by name): sink and slow index 1 and
the spout in container 1, slow indexes 0 and 2 in container 2. The flaky instance is
index 0, away from the spout, so a restart does not lose the spout's ledger."""

from autoscale_parts import FlakyWords, Ledger, RateSpout

from compat.storm_api import Grouping, Topology


class Restart(Topology):
    config = {
        "topology.workers": 2, "topology.acker.executors": 1,
        "topology.message.timeout.secs": 10,
        "heron.streammgr.network.backpressure.highwatermark.mb": 0.02,
        "heron.streammgr.network.backpressure.lowwatermark.mb": 0.01,
        "heron.topology.healthmgr.mode": "cluster",
        "heron.class.health.policies": ["auto-restart-backpressure-container"],
        "auto-restart-backpressure-container": {
            "health.policy.mode": "activated",
            "health.policy.interval.ms": 2000,
            "health.policy.window.ms": 10000,
            "health.policy.post.action.wait.ms": 15000,
        },
        "e2e.delay": 0.001,
        "e2e.flaky_index": 0,
        "e2e.flaky_after": 300,
        "e2e.flaky_delay": 0.05,
    }
    source = RateSpout.spec(par=1)
    slow = FlakyWords.spec(inputs={source: Grouping.SHUFFLE}, par=3)
    sink = Ledger.spec(inputs={slow: Grouping.SHUFFLE}, par=1)
