"""Task ids for the heron engine: components sorted by name, ids from 1, as Storm numbers
them (without Storm's ``__acker`` tasks, which Heron does not have), so a component's
task ids are the same on both engines whenever acking is off."""

from __future__ import annotations

from engine.common.plan.logical import LogicalPlan


def assign_task_ids(plan: LogicalPlan) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    next_id = 1
    for name in sorted(plan.components):
        par = plan.components[name].parallelism
        out[name] = list(range(next_id, next_id + par))
        next_id += par
    return out
