"""The Stream Manager's part of at-least-once: keys for every copy, emits and acks
routed to the Stream Manager of each tree's spout, and completion or failure reported
to the spout instance.

Batches carry tuple trees as columns (``root_counts``/``root_tasks``/``root_keys`` per
row; ``edge_keys`` per delivered copy), so a batch with no tracked rows costs nothing
here. For each copy sent, a random 64-bit key goes into the copy (the receiving bolt
acks it) and is XORed into every root of the row: directly into this manager's
:class:`XorManager` for its own spouts, otherwise as an ``EMIT`` entry to the root's
Stream Manager. Entries for one peer are kept in order in one pending batch, so a bolt's
emits always reach the root's manager before that bolt's ack of the anchoring tuple.

The tracker is the selected implementation's (``engine.fastpath.stmgr_path``: compiled
when built, else the pure-Python twin ``engine.fastpath.stmgr``, which is the reference).
A batch whose tree columns disagree raises ``MalformedBatch`` before anything changes.
"""

from __future__ import annotations

from engine.fastpath import MalformedBatch, stmgr_path

ACK, FAIL, EMIT = stmgr_path.ACK, stmgr_path.FAIL, stmgr_path.EMIT
#: control entries waiting for one destination, encoded as one ``ControlBatch``
ControlOut = stmgr_path.ControlOut
#: everything acking needs in one Stream Manager (``route_tracked``, ``on_control``,
#: ``take_outgoing``)
AckTracker = stmgr_path.AckTracker

__all__ = ["ACK", "EMIT", "FAIL", "AckTracker", "ControlOut", "MalformedBatch"]
