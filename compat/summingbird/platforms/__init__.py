"""Platforms that run a Summingbird job: ``MemoryPlatform`` (the oracle) and
``BatchPlatform`` (PySpark). Both take the same graph and options."""

from .base import Platform, RunResult
from .memory import MemoryPlan, MemoryPlatform

__all__ = ["BatchPlatform", "MemoryPlan", "MemoryPlatform", "Platform", "RunResult"]


def __getattr__(name: str) -> object:
    # PySpark is optional (a large dependency): import the batch platform on first use.
    if name in ("BatchPlatform", "BatchPlan"):
        from . import batch

        return getattr(batch, name)
    raise AttributeError(name)
