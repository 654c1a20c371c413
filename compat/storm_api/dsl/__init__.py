"""The topology DSL of ``compat.storm_api``: streamparse's ``Topology``, ``Grouping``, ``Stream``.

``spec_for_spout`` and ``spec_for_bolt`` are what ``Spout.spec`` and ``Bolt.spec``
delegate to, so the component classes need not know how specs are built.

It mixes with streamparse's DSL both ways (our specs and groupings in a
``streamparse.Topology``, streamparse's in ours): ``interop`` says how.
"""

from .component import ComponentSpec, spec_for_bolt, spec_for_spout
from .errors import (
    InvalidTopologyKey,
    InvalidTopologyType,
    InvalidTopologyValue,
    TopologyDefinitionError,
)
from .stream import Grouping, Stream
from .topology import Topology

__all__ = [
    "ComponentSpec",
    "Grouping",
    "InvalidTopologyKey",
    "InvalidTopologyType",
    "InvalidTopologyValue",
    "Stream",
    "Topology",
    "TopologyDefinitionError",
    "spec_for_bolt",
    "spec_for_spout",
]
