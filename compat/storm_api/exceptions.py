"""Runtime exceptions of the Storm API.

``StormWentAwayError`` keeps pystorm's meaning (the peer feeding the component
is gone, so the component should exit with status 2).  ``ComponentFailure`` is
what in-process hosting raises after user code failed and the component's own
error handling has run, so an engine can log one line and restart the task: the
engine owns it and the ``StormApiError`` base (``engine/common/runtime/errors.py``), and
they are re-exported here, where users catch them.
Topology-definition and planning errors live with the DSL and planner.
"""
from __future__ import annotations

from engine.common.runtime.errors import ComponentFailure, StormApiError

__all__ = ["StormApiError", "StormWentAwayError", "ComponentFailure"]


class StormWentAwayError(StormApiError):
    """The connection to Storm (or to the hosting engine) has ended.

    Raised on EOF or an I/O error on the multi-lang streams; ``run()`` turns
    it into exit status 2, as pystorm does.
    """

    def __init__(self) -> None:
        super().__init__("Got EOF while reading from Storm")
