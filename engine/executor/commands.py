"""Which processes a container runs: Heron's executor process table, as a pure function.

Container 0 runs the Topology Master (and the Health Manager when the topology config
has ``heron.topology.healthmgr.mode: cluster``); container i >= 1 runs its Stream Manager, its
Metrics Manager and one Heron Instance per task packed into it. Every process is
``<python> -m <module> --launch PATH ...`` and logs to ``logs/<process name>.log``.

The module each role runs can be replaced (tests, dry runs) with
``HERON_MODULE_OVERRIDES="role=module,..."`` (roles: tmanager, stmgr, metricsmgr,
instance, executor, healthmgr; ``*`` for all), e.g. ``*=engine.common.process.standin``.
The variable is inherited, so setting it for ``heron submit`` reaches the scheduler and
its executors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from engine.common.launch import (
    TMANAGER,
    LaunchSpec,
    executor_name,
    instance_id,
    metricsmgr_id,
    stmgr_id,
)
from engine.common.process import ProcessSpec
from engine.packing import PackingPlan

OVERRIDES_ENV = "HERON_MODULE_OVERRIDES"

MODULES: dict[str, str] = {
    "tmanager": "engine.tmanager",
    "stmgr": "engine.stmgr",
    "metricsmgr": "engine.metricsmgr",
    "instance": "engine.instance",
    "executor": "engine.executor",
    "scheduler": "engine.scheduler",
    "healthmgr": "engine.healthmgr",
}

#: Heron's executor name for the Health Manager process
HEALTHMGR = "heron-healthmgr"


def module_overrides(raw: str | None = None) -> dict[str, str]:
    """Parse ``role=module,...`` (from HERON_MODULE_OVERRIDES when ``raw`` is None)."""
    raw = os.environ.get(OVERRIDES_ENV, "") if raw is None else raw
    out: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in raw.split(","))):
        role, sep, module = item.partition("=")
        if not sep or not module.strip():
            raise ValueError(f"{OVERRIDES_ENV}: expected role=module, got {item!r}")
        out[role.strip()] = module.strip()
    return out


def resolve_modules(modules: Mapping[str, str] | None = None) -> dict[str, str]:
    """The module of every role: defaults < HERON_MODULE_OVERRIDES < ``modules``."""
    overrides = module_overrides()
    if modules:
        overrides.update(modules)
    resolved = dict(MODULES)
    if "*" in overrides:
        resolved = {role: overrides["*"] for role in resolved}
    resolved.update({k: v for k, v in overrides.items() if k != "*"})
    return resolved


def _proc(spec: LaunchSpec, name: str, module: str, *args: str) -> ProcessSpec:
    return ProcessSpec(name=name,
                       argv=[spec.python, "-m", module, "--launch", str(spec.path), *args],
                       log_path=spec.process_log(name), cwd=spec.working_dir)


def container_processes(spec: LaunchSpec, container: int, packing: PackingPlan, *,
                        modules: Mapping[str, str] | None = None,
                        shell_endpoint: str = "", healthmgr: bool = False) -> list[ProcessSpec]:
    """The processes of ``container``, in start order (stop order is the reverse by role:
    instances, then stream manager, metrics manager, topology master). With
    ``shell_endpoint`` (the container's shell, on a cluster) its Topology Master or
    Stream Manager publishes it. ``healthmgr``: container 0 also runs the Health
    Manager (the executor reads the topology config for it)."""
    mods = resolve_modules(modules)
    shell = ("--shell-endpoint", shell_endpoint) if shell_endpoint else ()
    if container == 0:
        procs = [_proc(spec, TMANAGER, mods["tmanager"], *shell)]
        if healthmgr:
            procs.append(_proc(spec, HEALTHMGR, mods["healthmgr"]))
        return procs
    plan = next((c for c in packing.containers if c.id == container), None)
    if plan is None:
        known = ", ".join(str(c.id) for c in packing.containers) or "none"
        raise ValueError(f"container {container} is not in packing plan {packing.id} "
                         f"(containers: 0 for the Topology Master, {known})")
    c = str(container)
    procs = [_proc(spec, stmgr_id(container), mods["stmgr"], "--container", c, *shell),
             _proc(spec, metricsmgr_id(container), mods["metricsmgr"], "--container", c)]
    for inst in sorted(plan.instances, key=lambda i: i.task_id):
        procs.append(_proc(spec, instance_id(container, inst.component, inst.task_id),
                           mods["instance"], "--container", c, "--task", str(inst.task_id)))
    return procs


def stop_stages(container: int, packing: PackingPlan) -> list[list[str]]:
    """Heron's orderly shutdown: instances first (they flush to their stream manager),
    then the stream manager, the metrics manager, and the Topology Master."""
    if container == 0:
        return [[HEALTHMGR], [TMANAGER]]
    plan = next((c for c in packing.containers if c.id == container), None)
    instances = [instance_id(container, i.component, i.task_id)
                 for i in (plan.instances if plan else [])]
    return [instances, [stmgr_id(container)], [metricsmgr_id(container)]]


def executor_process(spec: LaunchSpec, container: int, *,
                     modules: Mapping[str, str] | None = None) -> ProcessSpec:
    """The executor of ``container`` as the scheduler starts it."""
    mods = resolve_modules(modules)
    return _proc(spec, executor_name(container), mods["executor"], "--container", str(container))
