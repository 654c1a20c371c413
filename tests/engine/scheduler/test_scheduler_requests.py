"""The scheduler service's request handling: a kill, restart or update that does not name
the topology the service runs (empty, or another) is refused with INVALID_TOPOLOGY_NAME
naming the problem, and nothing happens. The service's own loop runs here on an inproc
socket with a recording stand-in for the local scheduler, so no process is started."""

from __future__ import annotations

import threading

import pytest
import zmq

from engine.common.network import decode, encode
from engine.messages import common_pb2, scheduler_pb2
from engine.scheduler.service import SchedulerService
from tests.engine.scheduler.conftest import two_container_plan

pytestmark = pytest.mark.timeout(30)


class RecordingScheduler:
    """What the service asks of the local scheduler, recorded instead of done."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def kill(self) -> None:
        self.calls.append(("kill",))

    def restart(self, index: int) -> None:
        self.calls.append(("restart", index))

    def update(self, proposed):
        self.calls.append(("update", proposed.id))
        return [], []

    def crash_looping(self) -> dict[str, str]:
        return {}


@pytest.fixture
def service(launch_spec):
    """``ask(message)`` sends one request to a serving SchedulerService and returns its
    answer; ``scheduler`` records what it was asked to do."""
    stop = threading.Event()
    svc = SchedulerService(launch_spec, state=None, stop=stop)
    svc.scheduler = RecordingScheduler()
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.bind("inproc://scheduler")
    dealer = ctx.socket(zmq.DEALER)
    dealer.connect("inproc://scheduler")
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(svc._serve(router)), daemon=True)
    thread.start()

    def ask(message):
        dealer.send_multipart(encode(message))
        assert dealer.poll(5000), "the service did not answer"
        return decode(dealer.recv_multipart())

    svc.ask = ask
    svc.result = result
    yield svc
    stop.set()
    thread.join(5)
    dealer.close(linger=0)
    router.close(linger=0)
    ctx.term()


def update(name=None):
    request = scheduler_pb2.UpdateTopologyRequest(
        current_packing_plan=two_container_plan().to_proto(),
        proposed_packing_plan=two_container_plan().to_proto())
    if name is not None:
        request.topology_name = name
    return request


@pytest.mark.parametrize("message", [
    scheduler_pb2.KillTopologyRequest(),
    scheduler_pb2.KillTopologyRequest(topology_name=""),
    scheduler_pb2.RestartTopologyRequest(container_index=1),
    update(),
], ids=["kill-no-name", "kill-empty-name", "restart-no-name", "update-no-name"])
def test_a_request_without_a_topology_name_is_refused_and_does_nothing(service, message):
    answer = service.ask(message)
    assert answer.status.status == common_pb2.INVALID_TOPOLOGY_NAME
    assert "names no topology" in answer.status.message
    assert message.DESCRIPTOR.name in answer.status.message
    assert "'wc'" in answer.status.message
    assert service.scheduler.calls == []
    assert not service.result  # still serving: a refused kill does not end the service


@pytest.mark.parametrize("message", [
    scheduler_pb2.KillTopologyRequest(topology_name="other"),
    scheduler_pb2.RestartTopologyRequest(topology_name="other", container_index=-1),
    update("other"),
], ids=["kill", "restart", "update"])
def test_a_request_for_another_topology_is_refused_and_does_nothing(service, message):
    answer = service.ask(message)
    assert answer.status.status == common_pb2.INVALID_TOPOLOGY_NAME
    assert "this scheduler runs 'wc', not 'other'" in answer.status.message
    assert service.scheduler.calls == []


def test_requests_naming_the_topology_are_carried_out(service):
    assert service.ask(scheduler_pb2.RestartTopologyRequest(
        topology_name="wc", container_index=1)).status.status == common_pb2.OK
    assert service.ask(update("wc")).status.status == common_pb2.OK
    assert service.ask(scheduler_pb2.KillTopologyRequest(
        topology_name="wc")).status.status == common_pb2.OK
    assert service.scheduler.calls == [("restart", 1), ("update", "wc-pack"), ("kill",)]
