"""Storm's Flux (declarative YAML topologies) read for both engines.

``read_flux(path, filter_file=..., env_filter=...)`` reads a Flux file as flux-core's
FluxParser and FluxBuilder do (substitution, includes, components, spouts, bolts,
streams) and maps its Java classes to what runs here; ``FluxTopology.topology_class()``
is the Topology class the plan compiler takes. docs/flux.md says what maps and what not.

The names below load on first use (PEP 562): every instance of a streamparse topology
asks whether its topology file is a Flux file, and the reader, its YAML schema and its
Kafka mapping would otherwise cost each one about 80 ms of start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compat.flux.errors import FluxError
    from compat.flux.model import FluxComponent, FluxStream
    from compat.flux.paths import is_flux_file, shell_dir_of
    from compat.flux.properties import parse_properties, read_properties
    from compat.flux.reader import read_flux
    from compat.flux.topology import FluxTopology

#: each public name -> the submodule that defines it
_HOMES = {
    "FluxError": "errors", "FluxComponent": "model", "FluxStream": "model",
    "is_flux_file": "paths", "shell_dir_of": "paths",
    "parse_properties": "properties", "read_properties": "properties",
    "read_flux": "reader", "FluxTopology": "topology",
}

__all__ = ["FluxComponent", "FluxError", "FluxStream", "FluxTopology", "is_flux_file",
           "parse_properties", "read_flux", "read_properties", "shell_dir_of"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
