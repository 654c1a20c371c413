"""Records written exactly once by a two-task file sink too slow for its spouts (its
Stream Manager in backpressure; small watermarks, as in keyed_autoscale), checkpoints
every 0.5 s: the sink is resized with `heron update` while it runs
(tests/engine/cli/test_heron_update_sinks.py)."""

from issue38_parts import RecordSpout, SlowFileSink

from compat.storm_api import Topology


class SinkRescaleFiles(Topology):
    config = {"topology.workers": 2, "topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 0.5,
              "heron.streammgr.network.backpressure.highwatermark.mb": 0.02,
              "heron.streammgr.network.backpressure.lowwatermark.mb": 0.01,
              "e2e.pad_bytes": 200}
    records = RecordSpout.spec(par=2)
    sink = SlowFileSink.spec(inputs=[records], par=2)
