"""Read a topology's packing plan, waiting a bounded time for the submitter to write it."""

from __future__ import annotations

import threading
import time
from typing import Any

from engine.packing import PackingPlan

#: how long executors and schedulers wait for ``packingplans/<name>``
PACKING_PLAN_WAIT_SECS = 30.0


class PackingPlanMissing(Exception):
    """No packing plan appeared in time; the text names the node and the store."""


def wait_for_packing_plan(state: Any, name: str, *, timeout: float = PACKING_PLAN_WAIT_SECS,
                          where: str = "the state manager",
                          cancel: threading.Event | None = None) -> PackingPlan:
    """``packingplans/<name>`` as a PackingPlan; retried every 0.2 s (the submitter may
    still be writing it, or a ZooKeeper connection may be settling)."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            message = state.get("packingplans", name)
            if message is not None:
                return PackingPlan.from_proto(message)
        except Exception as exc:  # StateError and friends: retry until the deadline
            last_error = exc
        if time.monotonic() >= deadline or (cancel is not None and cancel.is_set()):
            detail = f" (last error: {last_error})" if last_error else ""
            raise PackingPlanMissing(f"no packing plan packingplans/{name} in {where} after "
                                     f"{timeout:g}s{detail}; was the topology submitted?")
        time.sleep(0.2)
