"""At-least-once sentence splitting with a splitter that raises now and then (every
seventh sentence each task executes): restarts and replays, compared after
de-duplicating by message id (``sid``) and word position."""

from compat.storm_api import Grouping, Topology

from catalogue_wordcount import RaisingSplit, SentenceSpout


class SplitRaising(Topology):
    config = {"topology.acker.executors": 1, "topology.message.timeout.secs": 5.0,
              "conformance.raise.every": 7}

    sentences = SentenceSpout.spec()
    split = RaisingSplit.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
