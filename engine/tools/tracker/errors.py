"""What the tracker answers when it cannot: one exception per HTTP status.

The routes raise these and ``app.py`` turns each into ``{"detail": message}`` with its
status, so every failure names the thing (topology, component, parameter, endpoint)
and the server keeps serving: an unknown name is a 404, a Topology Master or state
manager that does not answer in time is a 503, a bad query parameter is a 422.
"""

from __future__ import annotations


class TrackerError(Exception):
    """Base of the tracker's errors; ``status`` is the HTTP status it becomes."""

    status = 500


class NotFound(TrackerError):
    """An unknown topology, component, instance or log file (404)."""

    status = 404


class BadParameter(TrackerError):
    """A query parameter the tracker cannot use; the message names it (422, as FastAPI's
    own validation errors, so clients handle one status for bad input)."""

    status = 422

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(f"query parameter {parameter!r}: {message}")
        self.parameter = parameter


class Unavailable(TrackerError):
    """A Topology Master or the state manager that is not there or does not answer
    within the tracker's bound (503: retrying later may work)."""

    status = 503
