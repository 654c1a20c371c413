"""A stored topology's config as Python values, and the one key of it that decides which
roles container 0 runs (``heron.topology.healthmgr.mode``).

Every role that reads a stored ``Topology`` (the executor, the Health Manager, the
submitter's update, the tracker) reads its config the same lenient way: each value is
JSON text, and one that is not is kept as its text. The executor must know whether to
start a Health Manager before any Health Manager code runs, as Heron's executor does from
the mode alone, so the mode's check lives here, below both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

HEALTHMGR_MODE = "heron.topology.healthmgr.mode"
HEALTHMGR_MODES = ("cluster", "disabled")


def topology_config(topology: Any) -> dict[str, Any]:
    """The topology-wide config of a stored ``Topology`` as Python values (each value is
    JSON text; a value that is not JSON is kept as its text)."""
    return {kv.key: config_value(kv) for kv in topology.topology_config.kvs}


def config_value(kv: Any) -> Any:
    """One stored config value: its JSON, or its text when it is not JSON."""
    try:
        return json.loads(kv.value)
    except (TypeError, ValueError):
        return kv.value


class HealthModeError(ValueError):
    """``heron.topology.healthmgr.mode`` is neither ``cluster`` nor ``disabled``; the
    message says what it got."""


def healthmgr_mode_on(config: Mapping[str, Any]) -> bool:
    """Whether ``heron.topology.healthmgr.mode`` asks for a Health Manager (``cluster``);
    :class:`HealthModeError` for any other value than ``cluster`` or ``disabled``."""
    raw = config.get(HEALTHMGR_MODE, "disabled")
    text = str(raw).strip().lower()
    if text not in HEALTHMGR_MODES:
        raise HealthModeError(f"must be cluster or disabled, got {raw!r}")
    return text == "cluster"
