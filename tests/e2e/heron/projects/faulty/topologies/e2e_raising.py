"""A bolt that raises now and then (every ``e2e.every``-th tuple), at-most-once."""

from e2e_heron_faulty import Numbers, RaisesNowAndThen

from compat.storm_api import Topology


class Raising(Topology):
    config = {"topology.acker.executors": 0}
    numbers = Numbers.spec()
    raising = RaisesNowAndThen.spec(inputs=[numbers])
