"""Which parallelism changes an effectively-once topology must refuse, decided in one place
for ``heron update`` (engine/submitter/update.py) and the Health Manager's scaling.

Under ``topology.reliability.mode: EFFECTIVELY_ONCE`` every checkpoint stores a stateful
component's state per task id, and a rollback gives each task the state stored under its
id. Until state can move with its keys, a change is refused when it changes the task ids
of any stateful component:

* its own parallelism changes: a removed task's state would be dropped, an added task
  would start empty, and a fields grouping (``tasks[hash % n]``) would send keys to tasks
  that never counted them;
* its tasks are renumbered by a change elsewhere: its stored state would be read by the
  wrong task. ``repack`` keeps every surviving task id, so today this never happens, but
  the rule compares the task ids of the current and proposed packing plans rather than
  trusting that, so a packing that renumbers is refused, not silently wrong.

Moving a task to another container keeps its id, and so its state (the state storage is
shared by every container), so ``--container-number`` and changes to stateless
components are allowed. Topologies in the other reliability modes keep nothing per task
and are never refused here.

A component is stateful when its class mixes in ``StatefulComponent``; the compiler
records that in the component's config (``STATEFUL_CONFIG_KEY``), because the CLI and the
Health Manager read the stored topology and cannot import the user's classes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compat.storm_api.config import RELIABILITY_MODE_KEY, ConfigError, reliability
from engine.plan.constants import STATEFUL_CONFIG_KEY
from engine.plan.topology_config import topology_config

__all__ = ["effectively_once", "frozen_components", "refusal", "refusal_message",
           "stateful_components"]

EFFECTIVELY_ONCE = "EFFECTIVELY_ONCE"


def effectively_once(topology: Any) -> bool:
    """Whether the stored ``Topology`` runs in EFFECTIVELY_ONCE mode, read as the engines
    read it (``reliability``); a config that no longer parses falls back to the mode key
    alone, so a malformed unrelated key cannot switch the guard off."""
    conf = topology_config(topology)
    try:
        return reliability(conf).effectively_once
    except ConfigError:
        return str(conf.get(RELIABILITY_MODE_KEY, "")).upper() == EFFECTIVELY_ONCE


def _is_true(raw: str) -> bool:
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        value = raw
    return value is True or (isinstance(value, str) and value.lower() == "true")


def stateful_components(topology: Any) -> set[str]:
    """The components of the stored ``Topology`` whose class is a ``StatefulComponent``
    (marked by the compiler), whatever the reliability mode."""
    out = set()
    for comp in [s.comp for s in topology.spouts] + [b.comp for b in topology.bolts]:
        if any(kv.key == STATEFUL_CONFIG_KEY and _is_true(kv.value) for kv in comp.config.kvs):
            out.add(comp.name)
    return out


def frozen_components(topology: Any) -> set[str]:
    """The components whose parallelism must not change now: the stateful ones of an
    effectively-once topology, none otherwise."""
    return stateful_components(topology) if effectively_once(topology) else set()


def refusal_message(component: str, before: list[int] | None = None,
                    after: list[int] | None = None) -> str:
    """The one line that names the component and says why; with ``before``/``after``
    task ids of the same length, the change renumbers its tasks rather than resizing it."""
    if before is not None and after is not None and len(before) == len(after):
        return (f"the change would renumber the tasks of {component!r} ({before} -> "
                f"{after}), a stateful component of an EFFECTIVELY_ONCE topology: its "
                "checkpointed state is stored per task id and would be read by the wrong task")
    return (f"{component!r} is a stateful component of an EFFECTIVELY_ONCE topology: its "
            "parallelism cannot change until state can move between tasks (its checkpointed "
            "state is stored per task id and would be lost or read by the wrong task)")


def _task_ids(plan: Any) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for _, inst in plan.instances():
        out.setdefault(inst.component, []).append(inst.task_id)
    return {name: sorted(ids) for name, ids in out.items()}


def refusal(topology: Any, current: Any, proposed: Any,
            parallelism: Mapping[str, int] | None = None) -> str | None:
    """Why moving the stored ``topology`` from packing plan ``current`` to ``proposed``
    (``PackingPlan``s) must be refused, or None when it may go ahead. ``parallelism``
    (component -> new count, as asked) lets a request that asks for a stateful
    component's change be named even before any packing is compared."""
    frozen = frozen_components(topology)
    if not frozen:
        return None
    before, after = _task_ids(current), _task_ids(proposed)
    for name in sorted(frozen):
        was, will = before.get(name, []), after.get(name, [])
        if parallelism is not None and name in parallelism and parallelism[name] != len(was):
            return refusal_message(name)
        if was != will:
            return refusal_message(name, was, will)
    return None
