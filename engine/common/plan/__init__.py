"""Logical plans: the engine-independent form of a topology.

``compile_topology`` turns a Storm-API Topology class (streamparse's or
``compat.storm_api``'s) into a validated ``LogicalPlan``; ``load_topology_class``
finds that class in a topology file as ``sparse`` does. Both engines run a
``LogicalPlan``; its protobuf form (``heron.proto.api.Topology``) is what the state
manager stores.

The names below load on first use (PEP 562): the Stream Manager and the Topology Master
read a ``LogicalPlan`` from the state manager but never compile one, and the compiler
brings the groupings, the Storm API and the configuration checks (about 80 ms of every
such process's start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.common.lazy_names import names_on_first_use

if TYPE_CHECKING:
    from engine.common.plan.compiler import CompiledTopology, compile_topology
    from engine.common.plan.discovery import is_topology_class, load_topology_class
    from engine.common.plan.errors import PlanningError
    from engine.common.plan.logical import ComponentDef, InputDef, LogicalPlan, StreamDef

#: each public name -> the submodule that defines it
_HOMES = {
    "CompiledTopology": "compiler", "compile_topology": "compiler",
    "is_topology_class": "discovery", "load_topology_class": "discovery",
    "PlanningError": "errors",
    "ComponentDef": "logical", "InputDef": "logical", "LogicalPlan": "logical",
    "StreamDef": "logical",
}

__all__ = ["CompiledTopology", "ComponentDef", "InputDef", "LogicalPlan", "PlanningError",
           "StreamDef", "compile_topology", "is_topology_class", "load_topology_class"]

__getattr__ = names_on_first_use(__name__, _HOMES)
