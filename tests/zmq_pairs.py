"""Connected zmq socket pairs for tests of the engine's flow control, in one context that
is closed (sockets and all) when the test is done, whether it passed or not."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator

import zmq

_names = itertools.count()


@contextlib.contextmanager
def router_and_dealer(identity: bytes) -> Iterator[tuple[zmq.Socket, zmq.Socket]]:
    """A Stream Manager's ROUTER (unroutable sends raise) and an instance's DEALER named
    ``identity``, connected over inproc; the dealer has said hello, so the router knows
    it before the test sends to it."""
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.setsockopt(zmq.ROUTER_MANDATORY, 1)
    endpoint = f"inproc://router-and-dealer-{next(_names)}"
    router.bind(endpoint)
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.IDENTITY, identity)
    dealer.connect(endpoint)
    try:
        dealer.send(b"hello")
        router.recv_multipart()
        yield router, dealer
    finally:
        router.close(0)
        dealer.close(0)
        ctx.term()


@contextlib.contextmanager
def pipe_pair() -> Iterator[tuple[zmq.Socket, zmq.Socket]]:
    """An instance's gateway end and executor end of its in-process pipe (PAIR)."""
    ctx = zmq.Context()
    gateway = ctx.socket(zmq.PAIR)
    endpoint = f"inproc://pipe-pair-{next(_names)}"
    gateway.bind(endpoint)
    executor = ctx.socket(zmq.PAIR)
    executor.connect(endpoint)
    try:
        yield gateway, executor
    finally:
        gateway.close(0)
        executor.close(0)
        ctx.term()
