"""Runtime errors both engines raise, each naming the component and task.

The engine owns them: ``StormApiError`` is the base of every runtime error a topology's
run raises (the engines' own and the Storm API's wire errors), ``ComponentFailure`` the
one signal that user code in a hosted task failed and the task is to be restarted.
``compat.storm_api.exceptions`` re-exports both, so users catch them where they did.
"""

from __future__ import annotations

from typing import Any

__all__ = ["StormApiError", "ComponentFailure", "LocalEngineError", "EmitError", "AckingError"]


class StormApiError(Exception):
    """Base of the runtime errors raised running a topology (by ``compat.storm_api``
    and by the engines hosting it)."""


class ComponentFailure(StormApiError):
    """User code in a hosted component raised; the task should be restarted.

    By the time this is raised the component has already reported the error
    and auto-failed its current tuples through its collector, as it would on
    the wire.  The original exception is also chained as ``__cause__``.
    """

    def __init__(self, component: str, task_id: object, original: BaseException,
                 traceback_text: str) -> None:
        self.component = component
        self.task_id = task_id
        self.original = original
        self.traceback_text = traceback_text
        detail = str(original).strip().splitlines()
        summary = type(original).__name__ + (f": {detail[0]}" if detail else "")
        super().__init__(f"component {component!r} task {task_id} failed: {summary}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.component, self.task_id, self.original, self.traceback_text))


class LocalEngineError(StormApiError):
    """The run could not start or had to stop."""


class FatalRunError(Exception):
    """An executor of the storm engine cannot go on (an engine error); the run stops.
    Here rather than with the executors so the CLI can name it without loading them."""


class EmitError(StormApiError):
    """An emit that Storm would reject (undeclared stream, wrong field count, bad direct emit)."""


class AckingError(StormApiError):
    """Storm's fatal acking cases: acking twice, acking an unknown id, anchoring to a
    tuple already acked or failed. Storm kills the worker; we restart the task."""
