"""An infinite spout, for activate/deactivate."""

from e2e_heron_faulty import Discard, Endless

from compat.storm_api import Topology


class EndlessTopology(Topology):
    config = {"topology.acker.executors": 0}
    endless = Endless.spec()
    discard = Discard.spec(inputs=[endless])
