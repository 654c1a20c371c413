"""``heron update --runtime-config POLICY:mode=...``: pause or resume a Health Manager
policy of a running topology without restarting anything.

The toggles are Heron's run-time keys (``<policy-id>:runtime``), written into the stored
topology's config where the running Health Manager reads them at its next tick. They
belong to the Health Manager, not to the submitter: only the Health Manager knows which
policies a topology has.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from engine.common.plan.topology_config import topology_config
from engine.healthmgr.errors import HealthConfigError
from engine.healthmgr.policies.config import healthmgr_enabled, parse_health_config
from engine.messages import topology_pb2
from engine.spi.statemgr import StateManager


class RuntimeConfigError(Exception):
    """A toggle that cannot be applied; the message names the topology, policy or value."""


def parse_runtime_config(values: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``["dynamic-resource-allocation:mode=deactivated"]`` ->
    ``{"dynamic-resource-allocation:runtime": "deactivated"}``: Heron's run-time toggle
    key of a Health Manager policy, ``<policy-id>:runtime``."""
    out: dict[str, str] = {}
    for raw in values:
        policy, sep, setting = raw.rpartition(":")
        key, eq, value = setting.partition("=")
        if not sep or not policy or not eq or key.strip() != "mode":
            raise RuntimeConfigError(f"--runtime-config {raw!r}: expected POLICY:mode=activated or "
                              "POLICY:mode=deactivated")
        value = value.strip().lower()
        if value not in ("activated", "deactivated"):
            raise RuntimeConfigError(f"--runtime-config {raw!r}: mode must be activated or "
                              f"deactivated, got {value!r}")
        out[f"{policy.strip()}:runtime"] = value
    return out


def set_runtime_config(state: StateManager, name: str, toggles: Mapping[str, str]) -> None:
    """Write ``toggles`` into the stored topology's config, where the running Health
    Manager reads them at its next tick (no process restarts). Each must name a policy
    of the topology's Health Manager."""
    topology = state.get("topologies", name)
    if topology is None:
        raise RuntimeConfigError(f"no running topology named {name!r}")
    config = topology_config(topology)
    try:
        enabled = healthmgr_enabled(config)
        policies = [p.id for p in parse_health_config(config).policies] if enabled else []
    except HealthConfigError as exc:
        raise RuntimeConfigError(f"{name!r} has an invalid Health Manager setting: {exc}") from None
    if not enabled:
        raise RuntimeConfigError(f"{name!r} has no Health Manager (heron.topology.healthmgr.mode "
                                 "is not cluster): there is no policy to toggle")
    for key in toggles:
        policy = key[:-len(":runtime")]
        if policy not in policies:
            raise RuntimeConfigError(f"--runtime-config: {name!r} has no policy {policy!r}; its "
                              f"policies: {', '.join(policies) or 'none'}")
    kvs = topology.topology_config.kvs
    for key, value in toggles.items():
        existing = next((kv for kv in kvs if kv.key == key), None)
        if existing is None:
            existing = kvs.add(key=key)
        existing.value = json.dumps(value)
        existing.type = topology_pb2.JSON_VALUE
    state.set("topologies", name, topology)
