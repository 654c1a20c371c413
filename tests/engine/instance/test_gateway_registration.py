"""The gateway's registration with its Stream Manager when a container is replaced.

After an executor is killed with SIGKILL its instances stop on their own, not at once,
while the new executor starts their successors. Two things must hold, or the successor is
never heard (its Stream Manager drops every tuple for it as "Host unreachable"):

* a Stream Manager's ROUTER keeps the first connection under an identity and ignores,
  for good, a later one under the same identity: the successor must connect again when
  its registration goes unanswered, and is then heard once the predecessor is gone;
* an instance that is stopping never connects or registers to the next Stream Manager.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import zmq
from zmq.utils.monitor import recv_monitor_message

from engine.common.network import decode, encode
from engine.instance import gateway as gateway_module
from engine.instance.gateway import STOP, Gateway
from engine.messages import metrics_pb2, physical_plan_pb2, stmgr_pb2
from tests.e2e.heron.helpers import wait_until

pytestmark = pytest.mark.timeout(60)

INSTANCE_ID = "container_1_relay_3"


@pytest.fixture
def ctx():
    context = zmq.Context()
    yield context
    context.destroy(linger=0)  # a gateway a failed test left running cannot hang the run


@pytest.fixture
def endpoints(tmp_path_factory):
    # short paths: a Unix socket's name is limited to about 100 bytes
    base = Path(tmp_path_factory.mktemp("gw"))
    return f"ipc://{base}/stmgr", f"ipc://{base}/metrics"


def stream_manager(ctx: zmq.Context, endpoint: str) -> zmq.Socket:
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
    sock.bind(endpoint)
    return sock


def start_gateway(ctx: zmq.Context, endpoints: tuple[str, str],
                  stopping: threading.Event) -> tuple[Gateway, zmq.Socket]:
    me = physical_plan_pb2.Instance(instance_id=INSTANCE_ID, stmgr_id="stmgr-1")
    me.info.task_id = 3
    me.info.component_name = "relay"
    gw = Gateway(ctx, f"inproc://gw-{id(stopping)}", stmgr_endpoint=endpoints[0],
                 metrics_endpoint=endpoints[1], instance=me, topology_name="t",
                 topology_id="t-1", publisher=metrics_pb2.MetricPublisher(),
                 stopping=stopping)
    gw.start()
    assert gw.bound.wait(10)
    pipe = ctx.socket(zmq.PAIR)
    pipe.setsockopt(zmq.LINGER, 0)
    pipe.connect(gw.pipe_endpoint)
    return gw, pipe


def stop_gateway(gw: Gateway, pipe: zmq.Socket) -> None:
    pipe.send_multipart([STOP])
    gw.join(10)
    pipe.close(linger=0)
    assert not gw.is_alive()


def answer_registrations(sm: zmq.Socket, timeout: float) -> list[str]:
    """Answer every registration that arrives within ``timeout``; the identities seen."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not sm.poll(50):
            continue
        identity, *frames = sm.recv_multipart()
        request = decode(frames)
        if isinstance(request, stmgr_pb2.RegisterInstanceRequest):
            seen.append(identity.decode())
            response = stmgr_pb2.RegisterInstanceResponse()
            response.status.status = 1
            sm.send_multipart([identity, *encode(response)])
    return seen


def wait(cond, timeout: float) -> bool:
    return bool(wait_until(cond, timeout, interval=0.02))


def test_a_successor_is_heard_once_its_stopping_predecessor_lets_go(ctx, endpoints,
                                                                    monkeypatch):
    monkeypatch.setattr(gateway_module, "REGISTER_RETRY_SECS", 0.2)
    monkeypatch.setattr(gateway_module, "REGISTER_RECONNECT_SECS", 0.5)
    sm = stream_manager(ctx, endpoints[0])
    predecessor = ctx.socket(zmq.DEALER)
    predecessor.setsockopt(zmq.LINGER, 0)
    predecessor.setsockopt(zmq.IDENTITY, INSTANCE_ID.encode())
    predecessor.connect(endpoints[0])
    predecessor.send_multipart([b"hello"])  # the Stream Manager now knows this connection
    assert sm.poll(5000) and sm.recv_multipart() == [INSTANCE_ID.encode(), b"hello"]
    gw, pipe = start_gateway(ctx, endpoints, threading.Event())
    try:
        # the successor's registrations arrive on a connection the ROUTER ignores
        assert answer_registrations(sm, 1.0) == []
        assert not gw.registered
        predecessor.close(linger=0)  # the predecessor stops
        seen: list[str] = []
        assert wait(lambda: seen.extend(answer_registrations(sm, 0.2)) or gw.registered, 10), \
            "the successor was never heard once its predecessor had gone"
        assert seen and set(seen) == {INSTANCE_ID}
    finally:
        stop_gateway(gw, pipe)
        sm.close(linger=0)


def test_a_stopping_instance_never_connects_to_the_next_stream_manager(ctx, endpoints,
                                                                       monkeypatch):
    monkeypatch.setattr(gateway_module, "REGISTER_RETRY_SECS", 0.2)
    stopping = threading.Event()
    sm = stream_manager(ctx, endpoints[0])
    gw, pipe = start_gateway(ctx, endpoints, stopping)
    try:
        assert wait(lambda: answer_registrations(sm, 0.1) != [] or gw.registered, 10)
        assert wait(lambda: gw.registered, 5)
        sm.close(linger=0)  # the Stream Manager dies with its executor...
        assert wait(lambda: not gw.registered, 10)
        stopping.set()      # ...and the instance is told to stop, but has not yet
        time.sleep(0.5)
        successor = stream_manager(ctx, endpoints[0])  # the new container's
        monitor = successor.get_monitor_socket(zmq.EVENT_ACCEPTED)
        try:
            assert answer_registrations(successor, 1.5) == []
            accepted = []
            while monitor.poll(0):
                accepted.append(recv_monitor_message(monitor))
            assert accepted == [], "a stopping instance connected to the new Stream Manager"
        finally:
            successor.disable_monitor()
            monitor.close(linger=0)
            successor.close(linger=0)
        # what the stopping task still emits has nowhere to go, and does not hold it up
        pipe.send_multipart([gateway_module.TO_STMGR, b"type", b"payload"])
    finally:
        stop_gateway(gw, pipe)
