"""Runtime exceptions of the Storm API.

``StormWentAwayError`` keeps pystorm's meaning (the peer feeding the component
is gone, so the component should exit with status 2).  ``ComponentFailure`` is
what in-process hosting raises after user code failed and the component's own
error handling has run, so an engine can log one line and restart the task.
Topology-definition and planning errors live with the DSL and planner.
"""
from __future__ import annotations

__all__ = ["StormApiError", "StormWentAwayError", "ComponentFailure"]


class StormApiError(Exception):
    """Base of the runtime errors raised by ``compat.storm_api``."""


class StormWentAwayError(StormApiError):
    """The connection to Storm (or to the hosting engine) has ended.

    Raised on EOF or an I/O error on the multi-lang streams; ``run()`` turns
    it into exit status 2, as pystorm does.
    """

    def __init__(self) -> None:
        super().__init__("Got EOF while reading from Storm")


class ComponentFailure(StormApiError):
    """User code in a hosted component raised; the task should be restarted.

    By the time this is raised the component has already reported the error
    and auto-failed its current tuples through its collector, as it would on
    the wire.  The original exception is also chained as ``__cause__``.
    """

    def __init__(self, component: str, task_id: object, original: BaseException, traceback_text: str) -> None:
        self.component = component
        self.task_id = task_id
        self.original = original
        self.traceback_text = traceback_text
        detail = str(original).strip().splitlines()
        summary = type(original).__name__ + (f": {detail[0]}" if detail else "")
        super().__init__(f"component {component!r} task {task_id} failed: {summary}")

    def __reduce__(self):
        return (type(self), (self.component, self.task_id, self.original, self.traceback_text))
