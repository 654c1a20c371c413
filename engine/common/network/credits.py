"""Byte credits between a Stream Manager and its local instances.

zmq queues count messages, and the kernel's socket buffers are the operating system's,
so neither bounds in bytes what waits between a Stream Manager and an instance: under a
flood, hundreds of milliseconds of words sat there, out of sight of the backpressure
watermarks. Heron bounds the same stretch with its instance's queues
(``heron.instance.internal.{bolt,spout}.{read,write}.queue.capacity``: 128 / 1024
messages read, 128 written). Here the bound is in bytes of tuple batches, and the
engine's own flow control keeps it:

* **read credit** (``heron.instance.internal.bolt.read.queue.capacity.bytes``): a Stream
  Manager sends a bolt instance a tuple batch only while the bytes it sent and the
  instance has not yet executed are under the capacity (a batch that crosses it goes;
  the next waits). The instance's executor thread gives the bytes back once it has run
  the batch (``InstanceCredit`` from the instance). Batches waiting for credit stay in
  the Stream Manager's queue for that instance, in order, where the backpressure
  watermarks see them: spouts stop, nothing is dropped.
* **write credit** (``heron.instance.internal.{spout,bolt}.write.queue.capacity.bytes``):
  an instance's executor hands the gateway a tuple batch only while the bytes it handed
  and the Stream Manager has not yet read are under the capacity; the Stream Manager
  gives them back as it reads each batch (``InstanceCredit`` from the Stream Manager).
  A Stream Manager that stops reading its spouts (backpressure) therefore holds them to
  this many bytes between their executor and its socket.

Only tuple batches spend credit. Everything else (plans, acks and fails, checkpoint
markers, restore requests, end of stream) costs none and keeps its place in the queue:
a marker behind data still waits for that data (that order is the checkpoint's), but no
control message ever waits for credit of its own. Credit messages themselves never
queue behind data.

A registration starts afresh: the Stream Manager resets an instance's read credit when
it registers (a restarted instance, or one that reconnected, has none of the old batches
in hand), and the instance resets its write credit when its registration is answered (a
restarted Stream Manager will never return credit for what its predecessor read). A
late return from before a reset is clamped: the count never goes below zero, so at worst
one capacity too much is granted, until the path next runs dry.

docs/decisions.md ("In-flight bounds") has the figures; the capacities' keys, defaults and
checks are engine.config.credits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable

from engine.common.network.codec import type_frame
from engine.messages import stmgr_pb2

log = logging.getLogger("heron.network")

CREDIT = type_frame(stmgr_pb2.InstanceCredit)

#: credit is given back once this share of the capacity is owed (and a bolt gives back
#: all it owes before it waits for input): see ``give_back_at``
GIVE_BACK_SHARE = 4


def give_back_at(capacity: int) -> int:
    """The bytes owed at which the receiving side gives credit back: a quarter of the
    capacity, not every batch.

    Each return is a message through two threads and a Stream Manager's loop; given back
    per batch, returns were as many messages as the data itself, and cost the word count
    about a sixth of its CPU. Holding back less than a quarter never stalls a sender: a
    sender that waits has at least the capacity in flight, so once the receiver has read
    what is on its way it owes at least that, crosses this threshold and gives it all
    back; until then the sender still has three quarters of its capacity to send with."""
    return max(1, capacity // GIVE_BACK_SHARE)


def encode_credit(nbytes: int) -> list[bytes]:
    """The frames ``[type, payload]`` giving ``nbytes`` of credit back."""
    return [CREDIT, stmgr_pb2.InstanceCredit(bytes=nbytes).SerializeToString()]


def decode_credit(payload: bytes) -> int | None:
    """The bytes a credit message gives back, or None (logged) when it is malformed:
    a bad credit must neither kill the process nor grant or take away anything."""
    try:
        message = stmgr_pb2.InstanceCredit.FromString(bytes(payload))
    except Exception as exc:
        log.warning("ignored a malformed credit message: %s: %s", type(exc).__name__, exc)
        return None
    if not message.HasField("bytes") or message.bytes <= 0:
        log.warning("ignored a credit message giving back %s bytes",
                    message.bytes if message.HasField("bytes") else "no")
        return None
    return message.bytes


class CreditLedger:
    """A Stream Manager's read credit per local bolt instance: the bytes of tuple
    batches sent to it that it has not yet said it executed. Instances it was never told
    about (spouts, peers) are not limited."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        #: destination -> bytes sent and not yet given back
        self.in_flight: dict[Hashable, int] = {}
        #: the most bytes ever in flight to one destination (a metric; at most the
        #: capacity plus the batch that crossed it)
        self.max_in_flight = 0
        self.returned = 0
        self.ignored = 0

    def open(self, key: Hashable) -> None:
        """``key`` (a registered bolt instance) starts with its full credit: a new
        registration has none of the old batches in hand."""
        self.in_flight[key] = 0

    def close(self, key: Hashable) -> None:
        self.in_flight.pop(key, None)

    def limits(self, key: Hashable) -> bool:
        return key in self.in_flight

    def may_send(self, key: Hashable) -> bool:
        """Whether one more batch may go to ``key`` now."""
        used = self.in_flight.get(key)
        return used is None or used < self.capacity

    def spend(self, key: Hashable, nbytes: int) -> None:
        used = self.in_flight.get(key)
        if used is None:
            return
        used += nbytes
        self.in_flight[key] = used
        if used > self.max_in_flight:
            self.max_in_flight = used

    def give_back(self, key: Hashable, nbytes: int) -> bool:
        """``key`` executed ``nbytes``; False (ignored) for an instance not limited. The
        count never goes below zero (a return from before a reset)."""
        used = self.in_flight.get(key)
        if used is None:
            self.ignored += 1
            return False
        self.in_flight[key] = max(0, used - nbytes)
        self.returned += nbytes
        return True


class WriteCredit:
    """An instance's write credit, shared by its executor thread (which spends it and
    waits for it) and its gateway thread (which gives back what the Stream Manager says
    it read, and resets it on each registration)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.in_flight = 0
        self.max_in_flight = 0
        #: seconds the executor waited for credit
        self.waited_secs = 0.0
        self._cond = threading.Condition()

    def acquire(self, nbytes: int, running: Callable[[], bool],
                while_waiting: Callable[[], None] | None = None) -> bool:
        """Wait until a batch may go (the bytes in flight are under the capacity), then
        count ``nbytes`` in flight; False if ``running()`` turned false meanwhile."""
        import time
        cond = self._cond
        with cond:
            if self.in_flight >= self.capacity:
                began = time.monotonic()
                while self.in_flight >= self.capacity:
                    if not running():
                        return False
                    cond.wait(0.1)
                    if while_waiting is not None and self.in_flight >= self.capacity:
                        cond.release()
                        try:
                            while_waiting()
                        finally:
                            cond.acquire()
                self.waited_secs += time.monotonic() - began
            self.in_flight += nbytes
            if self.in_flight > self.max_in_flight:
                self.max_in_flight = self.in_flight
        return True

    def give_back(self, nbytes: int) -> None:
        with self._cond:
            self.in_flight = max(0, self.in_flight - nbytes)
            self._cond.notify_all()

    def reset(self) -> None:
        with self._cond:
            self.in_flight = 0
            self._cond.notify_all()
