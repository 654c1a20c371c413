"""How a broken shell task is reported to the engine.

Engines restart a task when hosting raises ``ComponentFailure``; the bridge
raises the same thing whatever went wrong (the process died, went silent,
spoke garbage, or the collector refused what it sent), so engines need no
multi-lang special case.  A host that failed stays failed: every later call
raises the same failure until the engine closes it.
"""
from __future__ import annotations

from engine.common.runtime.errors import ComponentFailure

__all__ = ["component_failure"]


def component_failure(component: str, task_id: object, error: BaseException) -> ComponentFailure:
    """Wrap ``error`` for the engine; its full text becomes the logged detail."""
    failure = ComponentFailure(component, task_id, error, f"{type(error).__name__}: {error}\n")
    failure.__cause__ = error
    return failure
