"""Policy objects from their validated settings."""

from __future__ import annotations

from engine.healthmgr.policies.auto_restart import AutoRestartPolicy
from engine.healthmgr.policies.base import Policy
from engine.healthmgr.policies.config import HealthConfig, PolicyKind
from engine.healthmgr.policies.dynamic_resource_allocation import DynamicResourceAllocationPolicy


def build_policies(config: HealthConfig) -> list[Policy]:
    """One policy per configured id, in the order ``heron.class.health.policies`` lists."""
    out: list[Policy] = []
    for p in config.policies:
        if p.kind is PolicyKind.DYNAMIC_RESOURCE_ALLOCATION:
            out.append(DynamicResourceAllocationPolicy(p, config.max_parallelism))
        else:
            out.append(AutoRestartPolicy(p))
    return out
