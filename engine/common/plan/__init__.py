"""Logical plans: the engine-independent form of a topology.

``compile_topology`` turns a Storm-API Topology class (streamparse's or
``compat.storm_api``'s) into a validated ``LogicalPlan``; ``load_topology_class``
finds that class in a topology file as ``sparse`` does. Both engines run a
``LogicalPlan``; its protobuf form (``heron.proto.api.Topology``) is what the state
manager stores.
"""

from .compiler import CompiledTopology, compile_topology
from .discovery import is_topology_class, load_topology_class
from .errors import PlanningError
from .logical import ComponentDef, InputDef, LogicalPlan, StreamDef

__all__ = [
    "CompiledTopology",
    "ComponentDef",
    "InputDef",
    "LogicalPlan",
    "PlanningError",
    "StreamDef",
    "compile_topology",
    "is_topology_class",
    "load_topology_class",
]
