"""At-least-once through two containers, paced so a process can be killed mid-stream."""

from e2e_heron_acking import LedgerSpout, Pass, Sink

from compat.storm_api import Grouping, Topology


class Recovery(Topology):
    config = {"topology.workers": 2, "topology.acker.executors": 1,
              "topology.message.timeout.secs": 4}
    source = LedgerSpout.spec(par=2)
    relay = Pass.spec(inputs={source: Grouping.fields("n")}, par=2)
    sink = Sink.spec(inputs={relay: Grouping.SHUFFLE}, par=2)
