"""A read, checked Flux topology: what ``read_flux`` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .builder import build_topology_class
from .model import FluxComponent, FluxStream

__all__ = ["FluxTopology"]


@dataclass
class FluxTopology:
    """A read, checked Flux topology (``compat.flux.read_flux``)."""

    name: str
    config: dict[str, Any]
    spouts: list[FluxComponent]
    bolts: list[FluxComponent]
    streams: list[FluxStream]
    #: the YAML file (absolute)
    path: Path
    #: where shell components start: ``<yaml dir>/resources`` when present, else the
    #: YAML's directory (Storm runs them from the jar's ``resources/``)
    shell_dir: Path
    #: the substitution values used (placeholder body -> text), to rebuild the same
    #: topology elsewhere (``read_flux(path, values=...)``)
    values: dict[str, str] = field(default_factory=dict)
    #: the directory relative include paths were tried against first
    cwd: Path | None = None
    #: one line each: placeholders left as they were, keys ignored, overrides refused
    warnings: list[str] = field(default_factory=list)

    @property
    def components(self) -> list[FluxComponent]:
        return [*self.spouts, *self.bolts]

    def component(self, component_id: str) -> FluxComponent | None:
        return next((c for c in self.components if c.id == component_id), None)

    def topology_class(self) -> type:
        """A ``compat.storm_api`` Topology subclass the plan compiler takes."""
        return build_topology_class(self.name, self.config, self.components, self.streams,
                                    self.path.parent)
