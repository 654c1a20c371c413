"""An infinite spout, for activate/deactivate."""

from compat.storm_api import Topology

from e2e_heron_faulty import Discard, Endless


class EndlessTopology(Topology):
    config = {"topology.acker.executors": 0}
    endless = Endless.spec()
    discard = Discard.spec(inputs=[endless])
