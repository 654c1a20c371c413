"""Runtime errors both engines raise, each naming the component and task."""

from __future__ import annotations

from compat.storm_api.exceptions import StormApiError


class LocalEngineError(StormApiError):
    """The run could not start or had to stop."""


class EmitError(StormApiError):
    """An emit that Storm would reject (undeclared stream, wrong field count, bad direct emit)."""


class AckingError(StormApiError):
    """Storm's fatal acking cases: acking twice, acking an unknown id, anchoring to a
    tuple already acked or failed. Storm kills the worker; we restart the task."""
