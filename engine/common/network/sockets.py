"""Socket factories with the engine's settings, and a one-shot request helper for
command-line clients."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import zmq

from engine.common.network.codec import MalformedMessage, decode, encode

if TYPE_CHECKING:
    from engine.common.security.guard import ConnectionGuard, SocketSecurity

#: bounded linger: a process never hangs on exit waiting for a dead peer
LINGER_MS = 1000


def new_context() -> zmq.Context:
    return zmq.Context()


class InsecureSocketError(ValueError):
    """A TCP socket was about to be opened without the topology's security."""


def _is_tcp(endpoint: str) -> bool:
    return endpoint.startswith("tcp://")


def bind_router(ctx: zmq.Context, endpoint: str, *, sndhwm: int = 1000, rcvhwm: int = 1000,
                mandatory: bool = True, guard: ConnectionGuard | None = None,
                kind: str = "", buffer_bytes: int | None = None) -> tuple[zmq.Socket, str]:
    """A ROUTER bound to ``endpoint`` (``tcp://127.0.0.1:0`` picks a free port); returns the
    socket and the endpoint peers should connect to.

    A TCP endpoint needs ``guard`` (the process's ConnectionGuard): the socket then
    accepts only peers holding the topology's keys, and its refusals are counted under
    ``kind``. ipc endpoints live in owner-only directories and need no guard.
    ``buffer_bytes`` fixes the kernel's send and receive buffers (data sockets).
    """
    if _is_tcp(endpoint):
        if guard is None:
            raise InsecureSocketError(f"{endpoint}: engine TCP sockets must be secured with "
                                      f"the topology's keys")
        guard.security.check_endpoint(endpoint)
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, LINGER_MS)
    _set_buffers(sock, sndhwm, rcvhwm, buffer_bytes)
    if mandatory:
        # Sending to a peer that is not connected raises instead of dropping silently.
        sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
    if guard is not None and _is_tcp(endpoint):
        guard.secure_server(sock, kind or "tcp")
    try:
        sock.bind(endpoint)
    except zmq.ZMQError:
        sock.close(linger=0)
        raise
    if guard is not None and _is_tcp(endpoint):
        guard.watch(sock, kind or "tcp")
    actual = sock.getsockopt(zmq.LAST_ENDPOINT).decode()
    return sock, actual


def connect_dealer(ctx: zmq.Context, endpoint: str, identity: str, *, sndhwm: int = 1000,
                   rcvhwm: int = 1000, security: SocketSecurity | None = None,
                   buffer_bytes: int | None = None, connect: bool = True) -> zmq.Socket:
    """A DEALER connected to ``endpoint``; a TCP endpoint needs the topology's
    ``security`` (a server refuses a client without it during the handshake).

    ``connect=False`` leaves ``sock.connect(endpoint)`` to the caller, who can attach a
    socket monitor first: a connection made before the monitor is never reported."""
    if _is_tcp(endpoint) and security is None:
        raise InsecureSocketError(f"{endpoint}: engine TCP connections must be secured with "
                                  f"the topology's keys")
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, LINGER_MS)
    _set_buffers(sock, sndhwm, rcvhwm, buffer_bytes)
    sock.setsockopt(zmq.IDENTITY, identity.encode())
    if security is not None and _is_tcp(endpoint):
        security.client(sock)
    if connect:
        sock.connect(endpoint)
    return sock


def _set_buffers(sock: zmq.Socket, sndhwm: int, rcvhwm: int, buffer_bytes: int | None) -> None:
    sock.setsockopt(zmq.SNDHWM, sndhwm)
    sock.setsockopt(zmq.RCVHWM, rcvhwm)
    if buffer_bytes is not None:
        sock.setsockopt(zmq.SNDBUF, buffer_bytes)
        sock.setsockopt(zmq.RCVBUF, buffer_bytes)


class RequestTimeout(Exception):
    """The peer did not answer in time; the text names the endpoint."""


def request(endpoint: str, message: Any, timeout: float, *, identity: str | None = None,
            security: SocketSecurity | None = None) -> Any:
    """Send one message to a ROUTER at ``endpoint`` and return its decoded reply.

    ``security`` (the topology's keys) is required for a TCP endpoint. A server that
    refuses our keys looks like one that does not answer: the handshake fails and no
    reply comes, which the timeout reports.

    A fresh context per call keeps command-line clients simple; every socket is closed
    with bounded linger whatever happens.
    """
    import os
    import uuid

    ctx = zmq.Context()
    try:
        sock = connect_dealer(ctx, endpoint,
                              identity or f"client-{os.getpid()}-{uuid.uuid4().hex[:8]}",
                              security=security)
        try:
            sock.send_multipart(encode(message))
            if not sock.poll(int(timeout * 1000)):
                raise RequestTimeout(f"no answer from {endpoint} within {timeout:g}s")
            frames = sock.recv_multipart()
            try:
                return decode(frames)
            except MalformedMessage as exc:
                raise RequestTimeout(
                    f"{endpoint} answered with a malformed message: {exc}") from None
        finally:
            sock.close(linger=0)
    finally:
        ctx.term()
