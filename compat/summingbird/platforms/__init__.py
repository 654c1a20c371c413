"""Platforms that run a Summingbird job: ``MemoryPlatform`` (the oracle), ``BatchPlatform``
(PySpark) and ``StreamingPlatform`` (a topology on the storm or heron engine). All take
the same graph and options."""

from .base import Platform, RunResult
from .memory import MemoryPlan, MemoryPlatform

__all__ = ["BatchPlatform", "MemoryPlan", "MemoryPlatform", "Platform", "RunResult",
           "StreamingPlatform", "plan_topology", "run_streaming"]

_STREAMING = ("StreamingPlatform", "StreamingPlan", "StreamingResult", "run_streaming",
              "plan_topology", "AllowNonCommutative")


def __getattr__(name: str) -> object:
    if name in ("BatchPlatform", "BatchPlan"):
        # deferred: optional dependency (PySpark, a large one): the batch platform on first use
        from . import batch

        return getattr(batch, name)
    if name in _STREAMING:
        # deferred: start-up time; the streaming platform brings the Storm API and cloudpickle
        from . import streaming

        return getattr(streaming, name)
    raise AttributeError(name)
