"""Every grouping at once: one spout (two tasks) feeding a sink bolt per grouping kind.
Each sink emits ``[its task index, *input values]``, so the output shows where each
grouping sent every tuple; the catalogue's grouping cases each compare one sink."""

from compat.storm_api import Grouping, Topology

from catalogue_core import DirectingSpout, Sink


class Groupings(Topology):
    config = {"topology.acker.executors": 0}

    numbers = DirectingSpout.spec(par=2)
    shuffle_sink = Sink.spec(inputs={numbers: Grouping.SHUFFLE}, par=3)
    fields_sink = Sink.spec(inputs={numbers: Grouping.fields("key")}, par=3)
    all_sink = Sink.spec(inputs={numbers: Grouping.ALL}, par=2)
    global_sink = Sink.spec(inputs={numbers: Grouping.GLOBAL}, par=2)
    none_sink = Sink.spec(inputs={numbers: Grouping.NONE}, par=2)
    direct_sink = Sink.spec(inputs={numbers["direct"]: Grouping.DIRECT}, par=2)
    local_sink = Sink.spec(inputs={numbers: Grouping.LOCAL_OR_SHUFFLE}, par=2)
