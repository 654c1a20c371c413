"""Socket factories with the engine's settings, and a one-shot request helper for
command-line clients."""

from __future__ import annotations

from typing import Any

import zmq

from engine.network.codec import MalformedMessage, decode, encode

#: bounded linger: a process never hangs on exit waiting for a dead peer
LINGER_MS = 1000


#: messages a data socket holds each way (each message is a batch of up to
#: ``heron.instance.batch.size`` tuples). Small on purpose: what waits in zmq is invisible
#: to the Stream Manager's watermarks, so deep socket buffers would let a slow bolt hide
#: tens of megabytes from backpressure. A few batches in flight keep every path busy.
DATA_HWM = 16


def new_context() -> zmq.Context:
    return zmq.Context()


def bind_router(ctx: zmq.Context, endpoint: str, *, sndhwm: int = 1000, rcvhwm: int = 1000,
                mandatory: bool = True) -> tuple[zmq.Socket, str]:
    """A ROUTER bound to ``endpoint`` (``tcp://127.0.0.1:0`` picks a free port); returns the
    socket and the endpoint peers should connect to."""
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, LINGER_MS)
    sock.setsockopt(zmq.SNDHWM, sndhwm)
    sock.setsockopt(zmq.RCVHWM, rcvhwm)
    if mandatory:
        # Sending to a peer that is not connected raises instead of dropping silently.
        sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
    sock.bind(endpoint)
    actual = sock.getsockopt(zmq.LAST_ENDPOINT).decode()
    return sock, actual


def connect_dealer(ctx: zmq.Context, endpoint: str, identity: str, *, sndhwm: int = 1000,
                   rcvhwm: int = 1000) -> zmq.Socket:
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, LINGER_MS)
    sock.setsockopt(zmq.SNDHWM, sndhwm)
    sock.setsockopt(zmq.RCVHWM, rcvhwm)
    sock.setsockopt(zmq.IDENTITY, identity.encode())
    sock.connect(endpoint)
    return sock


class RequestTimeout(Exception):
    """The peer did not answer in time; the text names the endpoint."""


def request(endpoint: str, message: Any, timeout: float, *, identity: str | None = None) -> Any:
    """Send one message to a ROUTER at ``endpoint`` and return its decoded reply.

    A fresh context per call keeps command-line clients simple; every socket is closed
    with bounded linger whatever happens.
    """
    import os
    import uuid

    ctx = zmq.Context()
    try:
        sock = connect_dealer(ctx, endpoint, identity or f"client-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        try:
            sock.send_multipart(encode(message))
            if not sock.poll(int(timeout * 1000)):
                raise RequestTimeout(f"no answer from {endpoint} within {timeout:g}s")
            frames = sock.recv_multipart()
            try:
                return decode(frames)
            except MalformedMessage as exc:
                raise RequestTimeout(f"{endpoint} answered with a malformed message: {exc}") from None
        finally:
            sock.close(linger=0)
    finally:
        ctx.term()
