"""A spout that fails in open every time, and a bolt it would feed."""

from e2e_heron_faulty import Discard, NeverOpens

from compat.storm_api import Topology


class NeverOpensTopology(Topology):
    config = {"topology.acker.executors": 0}
    never_opens = NeverOpens.spec()
    discard = Discard.spec(inputs=[never_opens])
