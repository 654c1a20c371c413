"""Named streams: a spout splitting on ``even``/``odd``, a bolt reading both and
emitting on ``small``, ``large`` and ``default``."""

from compat.storm_api import Grouping, Topology

from catalogue_core import ParitySpout, Router


class NamedStreams(Topology):
    config = {"topology.acker.executors": 0}

    numbers = ParitySpout.spec()
    router = Router.spec(inputs={numbers["even"]: Grouping.SHUFFLE,
                                 numbers["odd"]: Grouping.fields("n")}, par=2)
