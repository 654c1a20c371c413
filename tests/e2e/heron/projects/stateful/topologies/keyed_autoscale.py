"""The keyed word count for the Health Manager: a spout offering a finite corpus of words
at the rate the test writes to a file, a counting bolt keeping its counts in keyed state
(fields-grouped on the word, parallelism 1, ``e2e.count_ms`` per word: about 200 words/s
per task, so it cannot keep up with 600/s) and the counts written exactly once to files,
effectively-once. The Health Manager's test settings (interval 2 s, window 10 s, wait
15 s) and small watermarks, as in the autoscale project, so the slow bolt puts its Stream
Manager into backpressure and the Health Manager scales it up, its counts moving with
their words."""

from e2e_stateful_parts import CountFiles, KeyedCountBolt
from stateful_autoscale_parts import RateWords

from compat.storm_api import Grouping, Topology


class KeyedAutoscale(Topology):
    config = {
        "topology.workers": 2, "topology.reliability.mode": "EFFECTIVELY_ONCE",
        "topology.stateful.checkpoint.interval.seconds": 1,
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
        "e2e.count_ms": 5,
        "e2e.pad_bytes": 1000,
    }
    words = RateWords.spec(par=1)
    count = KeyedCountBolt.spec(inputs={words: Grouping.fields("word")}, par=1)
    files = CountFiles.spec(inputs={count: Grouping.fields("word")}, par=1)
