"""Storm's Flux (declarative YAML topologies) read for both engines.

``read_flux(path, filter_file=..., env_filter=...)`` reads a Flux file as flux-core's
FluxParser and FluxBuilder do (substitution, includes, components, spouts, bolts,
streams) and maps its Java classes to what runs here; ``FluxTopology.topology_class()``
is the Topology class the plan compiler takes. docs/flux.md says what maps and what not.
"""

from compat.flux.errors import FluxError
from compat.flux.model import FluxComponent, FluxStream
from compat.flux.properties import parse_properties, read_properties
from compat.flux.reader import is_flux_file, read_flux, shell_dir_of
from compat.flux.topology import FluxTopology

__all__ = ["FluxComponent", "FluxError", "FluxStream", "FluxTopology", "is_flux_file",
           "parse_properties", "read_flux", "read_properties", "shell_dir_of"]
