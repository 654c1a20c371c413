"""A component module that imports where the topology is submitted but not in the
engine's worker processes (a dependency missing from the workers' environment): every
process the engine starts has HERON_PARENT_PID set."""

import os

from compat.storm_api import Bolt

if os.environ.get("HERON_PARENT_PID"):
    raise ImportError("e2e: e2e_heron_worker_only is not installed on the workers")


class WorkerOnly(Bolt):
    outputs = ["n"]

    def process(self, tup):
        self.emit([tup.values[0]])
