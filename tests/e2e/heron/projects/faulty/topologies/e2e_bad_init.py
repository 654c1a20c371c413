from e2e_heron_faulty import Numbers, RefusesToStart

from compat.storm_api import Topology


class BadInit(Topology):
    config = {"topology.acker.executors": 0}
    numbers = Numbers.spec()
    refuses_to_start = RefusesToStart.spec(inputs=[numbers])
