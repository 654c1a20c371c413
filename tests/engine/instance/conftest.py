"""Fixtures for tests that drive an instance's executor loops without a gateway."""

from __future__ import annotations

import pytest
import zmq


@pytest.fixture()
def pipe():
    """The executor's pipe to its gateway, connected to nothing: what the loop sends
    there is never read."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.PAIR)
    yield sock
    sock.close(linger=0)
    ctx.term()
