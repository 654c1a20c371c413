"""Which parallelism changes an effectively-once topology must refuse, decided in one place
for ``heron update`` (engine/submitter/update.py) and the Health Manager's scaling.

Under ``topology.reliability.mode: EFFECTIVELY_ONCE`` a stateful component's keyed state
moves with its keys when its parallelism changes (key groups: engine/common/grouping/key_groups.py,
engine/statefulstorage/keyed.py), and its per-task state is shared out among the new
tasks (engine/statefulstorage/rescale.py). A change is refused, naming the component,
only when that cannot be done:

* the component would have more tasks than the topology has key groups
  (``topology.stateful.key.groups``): a task would own no key group;
* its per-task state cannot be shared out: the class defines no ``rescale_state``
  (recorded by the compiler, ``RESCALE_CONFIG_KEY``) and the newest consistent checkpoint
  records per-task state that is neither empty nor all lists.

Renumbering alone (the same number of tasks under other ids) needs nothing: per-task
state is restored by the task's position among its component's tasks.

The refusal comes before anything is stored or any scheduler is asked, never at the
restore. Topologies in the other reliability modes keep nothing and are never refused.

A component is stateful when its class mixes in ``StatefulComponent``; the compiler
records that in the component's config (``STATEFUL_CONFIG_KEY``), because the CLI and the
Health Manager read the stored topology and cannot import the user's classes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from engine.common.plan.constants import RESCALE_CONFIG_KEY, STATEFUL_CONFIG_KEY
from engine.common.plan.topology_config import topology_config
from engine.config.errors import ConfigError
from engine.config.key_groups import KeyGroupError, key_groups
from engine.config.keys import KEY_GROUPS_KEY, RELIABILITY_MODE_KEY
from engine.config.reliability import reliability
from engine.messages import ckptmgr_pb2, topology_pb2
from engine.spi.packing_plan import PackingPlan
from engine.statefulstorage.rescale import OTHER

__all__ = ["effectively_once", "frozen_components", "refusal", "stateful_components"]

EFFECTIVELY_ONCE = "EFFECTIVELY_ONCE"


def effectively_once(topology: topology_pb2.Topology) -> bool:
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


def _marked(topology: topology_pb2.Topology, key: str) -> set[str]:
    out = set()
    for comp in [s.comp for s in topology.spouts] + [b.comp for b in topology.bolts]:
        if any(kv.key == key and _is_true(kv.value) for kv in comp.config.kvs):
            out.add(comp.name)
    return out


def stateful_components(topology: topology_pb2.Topology) -> set[str]:
    """The components of the stored ``Topology`` whose class is a ``StatefulComponent``
    (marked by the compiler), whatever the reliability mode."""
    return _marked(topology, STATEFUL_CONFIG_KEY)


def _groups(topology: topology_pb2.Topology) -> int:
    try:
        return key_groups(topology_config(topology))
    except KeyGroupError:
        return 0


def frozen_components(topology: topology_pb2.Topology,
                      checkpoints: ckptmgr_pb2.StatefulConsistentCheckpoints | None = None
                      ) -> dict[str, str]:
    """Component -> why its parallelism cannot change now (one line naming it): the
    stateful components of an effectively-once topology whose per-task state cannot be
    shared out. ``checkpoints``: the stored ``StatefulConsistentCheckpoints``."""
    if not effectively_once(topology):
        return {}
    rescalable = _marked(topology, RESCALE_CONFIG_KEY)
    newest = (checkpoints.consistent_checkpoints[0]
              if checkpoints is not None and len(checkpoints.consistent_checkpoints) else None)
    shapes: dict[str, Any] = {}
    newest_id = None  # named only where a shape came from it
    if newest:
        shapes = {c.component: c.task_state for c in newest.components}
        newest_id = newest.checkpoint_id
    out = {}
    for name in sorted(stateful_components(topology) - rescalable):
        if shapes.get(name) == OTHER:
            out[name] = (f"{name!r} keeps per-task state that is neither empty nor lists (its "
                         f"newest checkpoint, {newest_id}, says so) and its class "
                         "defines no rescale_state: its parallelism cannot change (keyed "
                         "state, state.keyed(), moves by itself; see docs/stateful.md)")
    return out


def refusal(topology: topology_pb2.Topology, current: PackingPlan, proposed: PackingPlan,
            parallelism: Mapping[str, int] | None = None,
            checkpoints: ckptmgr_pb2.StatefulConsistentCheckpoints | None = None) -> str | None:
    """Why moving the stored ``topology`` from packing plan ``current`` to ``proposed``
    (``PackingPlan``s) must be refused, or None when it may go ahead. ``parallelism``
    (component -> new count, as asked) names a request for a stateful component's change
    even before any packing is compared."""
    if not effectively_once(topology):
        return None
    frozen = frozen_components(topology, checkpoints)
    groups = _groups(topology)
    before, after = _task_ids(current), _task_ids(proposed)
    for name in sorted(stateful_components(topology)):
        was, will = before.get(name, []), after.get(name, [])
        wanted = parallelism.get(name, len(was)) if parallelism is not None else len(will)
        if len(was) == len(will) == wanted:
            continue  # renumbered at most: per-task state is restored by position
        if groups and max(wanted, len(will)) > groups:
            return (f"{name!r} cannot have {max(wanted, len(will))} tasks: the topology has "
                    f"{groups} key groups ({KEY_GROUPS_KEY}), the most tasks a stateful "
                    "component can have")
        if name in frozen:
            return frozen[name]
    return None


def _task_ids(plan: PackingPlan) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for _, inst in plan.instances():
        out.setdefault(inst.component, []).append(inst.task_id)
    return {name: sorted(ids) for name, ids in out.items()}
