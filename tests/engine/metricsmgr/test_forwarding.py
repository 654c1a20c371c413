"""A Metrics Manager forwards its publishers' latest metrics to the Topology Master every
interval, and at once when a task reports that it finished (``__done`` 1): a finite run
(``heron run``, the conformance engines) ends when the Topology Master has seen every
task's ``__done``, and waited up to a whole interval for the last one before.

The Metrics Manager runs here in a thread with real zmq sockets; the test plays the
Topology Master and a Heron Instance publishing to it. The interval is set to a minute,
so whatever reaches the Topology Master within the test was forwarded for a finished task.
"""

from __future__ import annotations

import threading

import pytest
import zmq

from engine.common.launch import metrics_socket_name
from engine.common.network import connect_dealer, decode, encode, ipc_endpoint
from engine.messages import metrics_pb2, tmanager_pb2
from engine.metricsmgr import manager as metricsmgr
from tests.fake_tmanager import FakeTManager

pytestmark = pytest.mark.timeout(60)

NAME = "forwarding"
INSTANCE = "container_1_split_2"


@pytest.fixture()
def world(tmp_path, monkeypatch):
    monkeypatch.setattr(metricsmgr, "FORWARD_SECS", 60.0)
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "home"))
    fake = FakeTManager(NAME, tmp_path, tmp_path)
    manager = metricsmgr.MetricsManager(fake.spec, 1, fake.state)
    running = threading.Event()
    running.set()
    thread = threading.Thread(target=manager.serve, args=(running.is_set,), daemon=True)
    thread.start()
    publisher = connect_dealer(fake.ctx, ipc_endpoint(fake.spec.topology_id,
                                                      metrics_socket_name(1)), INSTANCE)
    fake.sockets.append(publisher)
    try:
        yield dict(tm=fake.tm, publisher=publisher)
    finally:
        running.clear()
        thread.join(10)
        manager.close()
        fake.close()


def publish(publisher: zmq.Socket, **metrics: int) -> None:
    message = metrics_pb2.MetricPublisherPublishMessage()
    for name, value in metrics.items():
        message.metrics.add(name=f"__{name.replace('_', '-')}", value=str(value))
    publisher.send_multipart(encode(message))


def forwarded(tm: zmq.Socket, timeout_ms: int) -> dict[str, str] | None:
    """The instance's metrics in the next PublishMetrics the Topology Master gets."""
    if not tm.poll(timeout_ms):
        return None
    message = decode(tm.recv_multipart()[1:])
    assert isinstance(message, tmanager_pb2.PublishMetrics)
    return {m.name: m.value for m in message.metrics if m.instance_id == INSTANCE}


def test_a_finished_task_is_forwarded_at_once_and_a_running_one_at_the_interval(world):
    tm, publisher = world["tm"], world["publisher"]
    register = metrics_pb2.MetricPublisherRegisterRequest(publisher=metrics_pb2.MetricPublisher(
        hostname="127.0.0.1", component_name="split", instance_id=INSTANCE))
    publisher.send_multipart(encode(register))
    assert publisher.poll(10_000), "the registration was not answered"
    publisher.recv_multipart()

    publish(publisher, emit_count=5, done=0)
    assert forwarded(tm, 1_500) is None, "forwarded before the interval with no task done"

    publish(publisher, emit_count=9, done=1)
    values = forwarded(tm, 10_000)
    assert values is not None, "a finished task waited for the interval"
    assert (values["__done"], values["__emit-count"]) == ("1", "9")

    # done once is done: a later publish of the same task waits for the interval again
    publish(publisher, emit_count=9, done=1)
    assert forwarded(tm, 1_500) is None
