"""One spout (2 tasks, one per container) feeding a sink bolt per grouping kind: one
heron run shows where each grouping sent every tuple."""

from e2e_heron_groupings import Sink, TaggedNumbers

from compat.storm_api import Grouping, Topology


class Groupings(Topology):
    config = {"topology.workers": 2, "topology.acker.executors": 0}

    numbers = TaggedNumbers.spec(par=2)
    shuffle_sink = Sink.spec(inputs={numbers: Grouping.SHUFFLE}, par=2)
    fields_sink = Sink.spec(inputs={numbers: Grouping.fields("key")}, par=3)
    all_sink = Sink.spec(inputs={numbers: Grouping.ALL}, par=2)
    global_sink = Sink.spec(inputs={numbers: Grouping.GLOBAL}, par=2)
    none_sink = Sink.spec(inputs={numbers: Grouping.NONE}, par=2)
    direct_sink = Sink.spec(inputs={numbers["direct"]: Grouping.DIRECT}, par=2)
    local_sink = Sink.spec(inputs={numbers: Grouping.LOCAL_OR_SHUFFLE}, par=2)
