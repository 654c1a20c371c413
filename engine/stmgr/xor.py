"""XOR tracking of tuple trees for the spouts local to one Stream Manager.

Heron's scheme (Storm's acker, moved into the Stream Manager): a spout tuple's tree is
identified by its root key; every copy of a tuple sent anywhere in the tree gets a random
64-bit key, XORed into the root's value once when the copy is sent (an *emit*) and once
when a bolt acks it. The value returns to zero exactly when every copy has been acked,
whatever order the updates arrive in, except that an ack must not be applied before the
emits of the tuples the acking bolt anchored to it (the Stream Manager applies a bolt's
emits before its acks: both travel the same path, in order).

Entries live in a rotating map of buckets: a tree that never completes (a dropped tuple,
a dead bolt) is forgotten after about ``topology.message.timeout.secs``; the spout
instance enforces the timeout itself and fails the tuple, so nothing is reported here.

The maps are the selected implementation's (``engine.fastpath.stmgr_path``: compiled when
built, else the pure-Python twin ``engine.fastpath.stmgr``, which is the reference).
"""

from __future__ import annotations

from engine.fastpath import stmgr_path

#: root key -> running XOR in rotating buckets: ``xor``, ``start_many``, ``remove``, ``rotate``
RotatingXorMap = stmgr_path.RotatingXorMap
#: one rotating map per local spout task, rotated on Heron's schedule
XorManager = stmgr_path.XorManager

__all__ = ["RotatingXorMap", "XorManager"]
