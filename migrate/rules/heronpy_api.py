"""What of heronpy's API has a Storm-API (streamparse) counterpart, and what has none.

The ``heronpy`` rules read these tables only, so the mapping is one place to review:
a name listed in :data:`NAMES` is rewritten, a heronpy name that is not is reported
(ERROR) wherever it is used and left as it is. streamparse is the target for the names it
has; what only this project's Storm API has (state) comes from ``compat.storm_api``, which
is streamparse's API plus that.
"""

from __future__ import annotations

from typing import TypeGuard

from heronpy.api import api_constants

STREAMPARSE = "streamparse"
COMPAT = "compat.storm_api"

#: heronpy ``module.Name`` -> (target module, name there)
NAMES: dict[str, tuple[str, str]] = {
    "heronpy.api.spout.spout.Spout": (STREAMPARSE, "Spout"),
    "heronpy.api.bolt.bolt.Bolt": (STREAMPARSE, "Bolt"),
    "heronpy.api.topology.Topology": (STREAMPARSE, "Topology"),
    "heronpy.api.stream.Stream": (STREAMPARSE, "Stream"),
    "heronpy.api.stream.Grouping": (STREAMPARSE, "Grouping"),
    "heronpy.api.tuple.Tuple": (STREAMPARSE, "Tuple"),
    "heronpy.api.state.stateful_component.StatefulComponent": (COMPAT, "StatefulComponent"),
    "heronpy.api.state.state.State": (COMPAT, "State"),
    "heronpy.api.state.state.HashMapState": (COMPAT, "HashMapState"),
}

#: bases that make a class a heronpy bolt: nothing is anchored, acked or failed for it
BOLT_BASES = frozenset({"heronpy.api.bolt.bolt.Bolt", "heronpy.api.bolt.base_bolt.BaseBolt"})

#: the module whose constants become the string they stand for
CONSTANTS_MODULE = "heronpy.api.api_constants"

#: heronpy's topology defaults where Storm's differ: written into the migrated topology's
#: config (keys already there win), so it runs as it did under heronpy
HERONPY_DEFAULTS: dict[str, object] = {
    "topology.reliability.mode": "ATMOST_ONCE",
    "topology.max.spout.pending": 100,
}

#: why a heronpy name (by prefix) has no Storm-API counterpart, and what a person does
WHY_NOT: dict[str, tuple[str, str]] = {
    "heronpy.api.bolt.window_bolt": (
        "heronpy's window bolts have no Storm-API counterpart (a streamparse Topology skips "
        "a spec whose class is left as heronpy: the bolt would be missing)",
        "port the window to a Bolt that buffers tuples and closes windows in process_tick "
        "(or a BatchingBolt for tumbling time windows), or keep running it as heronpy"),
    "heronpy.api.task_hook": (
        "task hooks have no Storm-API counterpart in Python",
        "move what the hook does into the components (emit/ack/fail), or keep heronpy"),
    "heronpy.api.custom_grouping": (
        "heronpy's ICustomGrouping (prepare(context, component, stream, targets), "
        "choose_tasks(values)) has no streamparse counterpart",
        "use Grouping.fields(...) or another Storm grouping, or keep the topology as heronpy"),
    "heronpy.api.metrics": (
        "heronpy's metrics have no streamparse counterpart",
        "drop the metric or keep the component as heronpy (its metrics are reported as "
        "user/<name>)"),
    "heronpy.api.global_metrics": (
        "heronpy's global_metrics have no streamparse counterpart",
        "drop the counter or keep the component as heronpy"),
    "heronpy.api.topology.TopologyBuilder": (
        "a TopologyBuilder outside the `if __name__ == '__main__':` form the heronpy-builder "
        "rule rewrites",
        "write the topology as a Topology class (one attribute per spec)"),
    "heronpy.streamlet": (
        "the Streamlet API has no Storm-API counterpart",
        "keep the topology as heronpy (heron run takes it), or write it as spouts and bolts"),
    "heronpy.connectors": (
        "heronpy's Streamlet connectors have no Storm-API counterpart",
        "keep the topology as heronpy, or write the source or sink as a Spout or Bolt"),
    "heronpy": (
        "this heronpy name has no Storm-API counterpart",
        "port it by hand or keep this file as heronpy"),
}

#: heronpy TopologyContext methods: Storm's context is a dict, so none of them exist
CONTEXT_METHODS = frozenset({
    "get_task_id", "get_component_id", "get_cluster_config", "get_topology_name",
    "register_metric", "get_sources", "get_this_sources", "get_component_tasks",
    "add_task_hook", "get_topology_pex_path", "invoke_hook_prepare", "invoke_hook_cleanup",
    "get_metrics_collector", "get_topology"})

#: what a context method's caller can use instead, where there is something
CONTEXT_INSTEAD: dict[str, str] = {
    "get_task_id": "self.task_id (Storm's context dict: context['taskid'])",
    "get_component_id": "self.component_name (context['componentid'])",
    "get_topology_name": "self.topology_name",
    "get_cluster_config": "the config passed to initialize",
}

#: heronpy Tuple fields streamparse's Tuple lacks
TUPLE_ONLY = frozenset({"creation_time", "roots"})

#: config keys that mean nothing to a streamparse topology: (why, what to do)
CONFIG_WITHOUT_MEANING: dict[str, tuple[str, str]] = {
    api_constants.TOPOLOGY_AUTO_TASK_HOOKS: (
        "task hooks do not run for Storm-API components",
        "move what the hooks do into the components, or keep the topology as heronpy"),
    api_constants.TOPOLOGY_SERIALIZER_CLASSNAME: (
        "heronpy's tuple serializer class is not read by the Storm API",
        "set topology.tuple.serializer if values need another serializer"),
}


def constant_value(attribute: str) -> str | None:
    """The string an ``api_constants`` name stands for (``TOPOLOGY_DEBUG``,
    ``TopologyReliabilityMode.ATLEAST_ONCE``), or None when heronpy has no such name."""
    value: object = api_constants
    for part in attribute.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value if isinstance(value, str) else None


def why_not(qualified: str) -> tuple[str, str]:
    """Why ``qualified`` (a heronpy name with no counterpart) is left, and what to do."""
    for prefix in sorted(WHY_NOT, key=len, reverse=True):
        if qualified == prefix or qualified.startswith(prefix + "."):
            return WHY_NOT[prefix]
    return WHY_NOT["heronpy"]


def is_heronpy(dotted: str | None) -> TypeGuard[str]:
    """True for ``heronpy`` and anything under it."""
    return dotted is not None and dotted.split(".")[0] == "heronpy"
