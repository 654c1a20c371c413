"""Read a topology's packing plan, waiting a bounded time for the submitter to write it."""

from __future__ import annotations

import threading
import time
from typing import Any

from engine.packing import PackingPlan

#: how long executors and schedulers wait for ``packingplans/<name>``
PACKING_PLAN_WAIT_SECS = 30.0


class PackingPlanMissing(Exception):
    """No packing plan (holding the container asked for) appeared in time; the text names
    the node and the store."""


def wait_for_packing_plan(state: Any, name: str, *, timeout: float = PACKING_PLAN_WAIT_SECS,
                          where: str = "the state manager",
                          cancel: threading.Event | None = None,
                          container: int | None = None) -> PackingPlan:
    """``packingplans/<name>`` as a PackingPlan; retried every 0.2 s (the submitter may
    still be writing it, or a ZooKeeper connection may be settling).

    ``container``: wait until the plan holds that container too. ``heron update`` stores a
    plan only after the scheduler accepted it, so an added container's executor can
    start a moment before the plan that names it is written."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    plan: PackingPlan | None = None
    while True:
        try:
            message = state.get("packingplans", name)
            if message is not None:
                plan = PackingPlan.from_proto(message)
                if not container or any(c.id == container for c in plan.containers):
                    return plan
        except Exception as exc:  # StateError and friends: retry until the deadline
            last_error = exc
        if time.monotonic() >= deadline or (cancel is not None and cancel.is_set()):
            if plan is not None:
                if cancel is not None and cancel.is_set():
                    return plan
                known = ", ".join(str(c.id) for c in plan.containers) or "none"
                raise PackingPlanMissing(
                    f"container {container} is not in packing plan {plan.id} "
                    f"(packingplans/{name} in {where}, containers {known}) after "
                    f"{timeout:g}s; was it removed by `heron update`?")
            detail = f" (last error: {last_error})" if last_error else ""
            raise PackingPlanMissing(f"no packing plan packingplans/{name} in {where} after "
                                     f"{timeout:g}s{detail}; was the topology submitted?")
        time.sleep(0.2)
