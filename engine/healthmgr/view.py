"""The :class:`~engine.healthmgr.topology.TopologyView` of a running topology, built from
what the state manager holds: the stored topology (its config, where run-time toggles
appear), the packing plan (what should run) and the Topology Master's physical plan
(what runs)."""

from __future__ import annotations

from engine.common.plan.topology_config import topology_config
from engine.healthmgr.topology import ComponentView, TopologyView
from engine.messages import ckptmgr_pb2, packing_plan_pb2, physical_plan_pb2, topology_pb2
from engine.submitter.stateful_guard import effectively_once, frozen_components, stateful_components


def _fields_grouped(topology: topology_pb2.Topology) -> set[str]:
    """Bolts whose keys move between instances when their parallelism changes. Not the
    stateful ones of an effectively-once topology: their keyed state moves with the keys
    (key groups), so nothing a key accumulated is left behind."""
    moving_with_state = stateful_components(topology) if effectively_once(topology) else set()
    return {b.comp.name for b in topology.bolts
            if any(i.gtype == topology_pb2.FIELDS for i in b.inputs)} - moving_with_state


def _tasks(packing: packing_plan_pb2.PackingPlan) -> dict[int, tuple[str, int]]:
    """task id -> (component, container) in a packing plan."""
    return {i.task_id: (i.component_name, c.id)
            for c in packing.container_plans for i in c.instance_plans}


def build_view(topology: topology_pb2.Topology, packing: packing_plan_pb2.PackingPlan,
               pplan: physical_plan_pb2.PhysicalPlan,
               checkpoints: ckptmgr_pb2.StatefulConsistentCheckpoints | None = None
               ) -> TopologyView:
    """The view at this moment. ``updating`` is true while the physical plan does not
    yet run the packing plan's tasks (an update is moving instances); ``active`` is
    false while the Topology Master has the topology deactivated."""
    planned = _tasks(packing)
    running = {i.info.task_id: i for i in pplan.instances}
    updating = set(planned) != set(running)
    spouts = {s.comp.name for s in topology.spouts}
    keyed = _fields_grouped(topology)
    instances: dict[str, dict[str, int]] = {}
    for task, inst in sorted(running.items()):
        component = inst.info.component_name
        container = planned.get(task, (component, -1))[1]
        instances.setdefault(component, {})[inst.instance_id] = container
    frozen = frozen_components(topology, checkpoints)
    components = {name: ComponentView(name, members, spout=name in spouts,
                                       fields_grouped=name in keyed,
                                       scaling_refused=frozen.get(name, ""))
                  for name, members in instances.items()}
    active = pplan.topology.state != topology_pb2.PAUSED
    return TopologyView(topology.name, components, active=active, updating=updating,
                        config=topology_config(topology))
