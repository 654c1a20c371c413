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
    # PySpark is optional (a large dependency): import the batch platform on first use.
    if name in ("BatchPlatform", "BatchPlan"):
        from . import batch

        return getattr(batch, name)
    # The streaming platform brings the Storm API and the engines: also on first use.
    if name in _STREAMING:
        from . import streaming

        return getattr(streaming, name)
    raise AttributeError(name)
