"""The Stream Manager's per-tuple work in pure Python: the reference the compiled twin
(``_stmgr.pyx``) must match result for result and error for error, and the fallback
where it is not built.

What runs per row at a Stream Manager lives here: splitting a batch per destination
task by its grouping (``split_batch``, ``split_indices``, ``rebatch``,
``split_rebatched``), the XOR
bookkeeping of tuple trees in rotating buckets (``RotatingXorMap``, ``XorManager``), and
the at-least-once work around it (``AckTracker``: a key per copy sent, emits and acks
applied or forwarded in order, completions and failures for the spouts, ``ControlOut``).
Building the routes from the plan stays in ``engine.stmgr.routing`` (once per plan, not
per tuple); callers import these names from ``engine.stmgr.routing``, ``.xor`` and
``.acking``, which hand out the selected implementation.

A batch whose columns do not agree with each other (a destination count for some rows
only, fewer key hashes than rows times their width, tree columns of other lengths than
their counts say) raises ``MalformedBatch`` before anything is routed or applied, so a
bad message changes no state and the Stream Manager drops it whole.

The twin is kept in three modules, one per section of the compiled twin:
``stmgr_routing`` (the checks and the split), ``stmgr_xor`` (the rotating XOR maps) and
``stmgr_acking`` (the tracker); this module is the twin as callers and the compiled
module see it, every name in one place.
"""

from __future__ import annotations

from engine.fastpath.stmgr_acking import ACK, EMIT, FAIL, AckTracker, ControlOut, edge_keys
from engine.fastpath.stmgr_routing import (ALL, DIRECT, FIELDS, LOWEST, SHUFFLE, check_control,
                                           check_routing, check_tracked, rebatch, split_batch,
                                           split_indices, split_rebatched)
from engine.fastpath.stmgr_xor import RotatingXorMap, XorManager

#: False here, True in the compiled twin: which one a caller holds.
COMPILED = False


def path_counts() -> dict[str, tuple[int, int]]:
    """The compiled twin's ``{function: (calls handled compiled, calls handed to this
    twin)}``; empty here, where nothing runs compiled (so callers iterate either)."""
    return {}


def reset_path_counts() -> None:
    """The compiled twin's counts start over; nothing to do here."""


__all__ = ["ACK", "ALL", "COMPILED", "DIRECT", "EMIT", "FAIL", "FIELDS", "LOWEST", "SHUFFLE",
           "AckTracker", "ControlOut", "RotatingXorMap", "XorManager", "check_control",
           "check_routing", "check_tracked", "edge_keys", "path_counts", "rebatch",
           "reset_path_counts", "split_batch", "split_indices", "split_rebatched"]
