"""At-least-once across two containers: fails and timeouts are replayed until every id
is acked."""

from e2e_heron_acking import Flaky, LedgerSpout, Sink

from compat.storm_api import Grouping, Topology


class Replay(Topology):
    config = {"topology.workers": 2, "topology.acker.executors": 1,
              "topology.message.timeout.secs": 3}
    source = LedgerSpout.spec(par=2)
    flaky = Flaky.spec(inputs={source: Grouping.fields("n")}, par=2)
    sink = Sink.spec(inputs={flaky: Grouping.SHUFFLE}, par=2)
