from e2e_heron_faulty import Numbers
from e2e_heron_worker_only import WorkerOnly

from compat.storm_api import Topology


class WorkerImport(Topology):
    config = {"topology.acker.executors": 0}
    numbers = Numbers.spec()
    worker_only = WorkerOnly.spec(inputs=[numbers])
