"""The ``storm`` engine: Storm's execution model in one process, the reference engine."""

from compat.storm_api.local.capture import OutputCapture
from compat.storm_api.local.cluster import LocalCluster, RunResult

__all__ = ["LocalCluster", "OutputCapture", "RunResult"]
