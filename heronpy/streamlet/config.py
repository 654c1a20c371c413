"""``Config``: delivery semantics, containers, resources and user keys of a streamlet topology.

Everything lands in ``_api_config``, the heronpy topology config ``Runner.run`` sets on its
``TopologyBuilder``: delivery semantics become ``topology.reliability.mode``.
"""

from __future__ import annotations

from typing import Any

from heronpy.api import api_constants
from heronpy.streamlet.resources import Resources

_MODES = {1: api_constants.TopologyReliabilityMode.ATMOST_ONCE,
          2: api_constants.TopologyReliabilityMode.ATLEAST_ONCE,
          3: api_constants.TopologyReliabilityMode.EFFECTIVELY_ONCE}


class Config:
    """The configuration ``Runner.run(name, config, builder)`` submits with."""

    ATMOST_ONCE = 1
    ATLEAST_ONCE = 2
    EFFECTIVELY_ONCE = 3

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        if config is not None and not isinstance(config, dict):
            raise RuntimeError("Config has to be of type dict")
        self._api_config: dict[str, Any] = config if config is not None else {}

    def set_delivery_semantics(self, semantics: int) -> None:
        if isinstance(semantics, bool) or semantics not in _MODES:
            raise RuntimeError(f"Unknown Topology delivery semantics {semantics}")
        self._api_config[api_constants.TOPOLOGY_RELIABILITY_MODE] = _MODES[semantics]

    def set_num_containers(self, ncontainers: int) -> None:
        self._api_config[api_constants.TOPOLOGY_STMGRS] = int(ncontainers)

    def set_container_resources(self, resources: Resources) -> None:
        if not isinstance(resources, Resources):
            raise RuntimeError("container resources have to be of type Resources")
        self._api_config[api_constants.TOPOLOGY_CONTAINER_CPU_REQUESTED] = resources.get_cpu()
        self._api_config[api_constants.TOPOLOGY_CONTAINER_RAM_REQUESTED] = resources.get_ram()

    def set_user_config(self, key: str, value: Any) -> None:
        self._api_config[key] = value
