"""The plan's names and keys, in a module of their own: every other plan module reads them
and this one reads nothing, so ``definitions``, ``validation``, ``proto_codec`` and
``logical`` form no circle."""

from __future__ import annotations

__all__ = [
    "BOLT",
    "DEFAULT_STREAM",
    "GROUPINGS",
    "KINDS",
    "PARALLELISM_CONFIG_KEY",
    "SPOUT",
    "STATEFUL_CONFIG_KEY",
    "SYSTEM_PREFIX",
]

SPOUT = "spout"
BOLT = "bolt"
KINDS = (SPOUT, BOLT)
DEFAULT_STREAM = "default"
#: Grouping names used by InputDef.grouping. "global" is Heron's LOWEST; "none"
#: behaves as shuffle; "custom" runs a Python grouping class named by
#: InputDef.custom_grouping.
GROUPINGS = ("shuffle", "fields", "all", "global", "none", "direct", "local_or_shuffle", "custom")
#: Names starting with this belong to the system (__acker, __system, __tick, ...).
SYSTEM_PREFIX = "__"
#: Heron keeps a component's parallelism in its config under this key, so the plan
#: does too; user configuration must not set it.
PARALLELISM_CONFIG_KEY = "topology.component.parallelism"
#: Set (to true) in a component's config by the compiler when the component's class mixes
#: in ``compat.storm_api.StatefulComponent``. It is recorded because the roles that change
#: a running topology's parallelism (``heron update``, the Health Manager) read the stored
#: topology and cannot import the user's classes; engine/submitter/stateful_guard.py reads it.
STATEFUL_CONFIG_KEY = "topology.component.stateful"
#: Set (to true) by the compiler when a stateful component's class defines
#: ``rescale_state``: its per-task state can be shared out at any parallelism.
RESCALE_CONFIG_KEY = "topology.component.rescale.state"
