"""How much data may be in flight on each hop, by bytes and time as well as by count.

A word emitted by a spout passes through a handful of queues before a bolt counts it:
the spout's open batch, the executor -> gateway pipe, the instance -> Stream Manager
socket, the Stream Manager's queue per destination, the Stream Manager -> Stream
Manager socket, and the same again on the bolt's side. Under a flood each of them
fills, and a word waits for everything queued ahead of it: the time a word waits is the
bytes in flight divided by the rate the slowest bolt drains them. So every hop is
bounded in bytes, and the open batch also in time:

* an instance sends its open batch after ``heron.instance.emit.batch.time.ms`` or once
  its rows reach ``heron.instance.emit.batch.size.bytes`` (Heron's keys), or
  ``heron.instance.batch.size`` rows, whichever comes first;
* between a Stream Manager and its instances, byte credits (engine.common.network.credits)
  bound what is in flight whatever zmq and the kernel would hold: a bolt is sent at most
  its read capacity (64 KiB) beyond what it has executed, a spout hands its gateway at
  most its write capacity (32 KiB) beyond what its Stream Manager has read (each plus
  the batch that crossed it); the executor <-> gateway pipes are inside that bound;
* between Stream Managers a zmq queue holds at most ``DATA_HWM`` messages, each at most
  one batch: ``DATA_HWM x emit.batch.size.bytes`` each way (plus one row larger than a
  batch, which is sent alone), plus the kernel's socket buffers, which are the operating
  system's (``SOCKET_BUFFER_BYTES`` None). Fixing them small (64 KiB) was tried: under a
  slow bolt an instance then stopped noticing its Stream Manager's restart (zmq never
  read the closed connection) and ``heron update`` hung;
* the Stream Manager's queue per destination is capped by the backpressure high
  watermark (``engine.stmgr.backpressure``): over it, or once its oldest message has
  waited the time watermark (40 ms by default), every spout stops.

:func:`hop_cap_bytes` is that documented cap for one hop; the Stream Manager reports
its largest queue (``__largest-queue-bytes-max``) against it. docs/decisions.md
("In-flight bounds") gives the figures; the batching keys, defaults and checks are
engine.config.batching.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.config.batching import batching

#: messages a data socket holds each way (see engine.common.network.sockets)
DATA_HWM = 16
#: SO_SNDBUF / SO_RCVBUF of the data sockets (the kernel's share of a hop); None keeps
#: the operating system's (see above)
SOCKET_BUFFER_BYTES: int | None = None


def hop_cap_bytes(config: Mapping[str, Any]) -> int:
    """The most bytes one zmq queue of a data hop can hold: ``DATA_HWM`` batches."""
    return DATA_HWM * batching(config).bytes
