"""The engine's :class:`~engine.healthmgr.actuator.Actuator`: the requests ``heron
update --component-parallelism`` and ``heron restart NAME C`` make, from the Health
Manager in container 0.

Scaling repacks from the stored packing plan (surviving instances keep their task ids
and containers, engine/submitter/update.py), sends the proposed plan to the topology's
scheduler service and, once it accepted, stores the topology and the proposed plan,
exactly as ``heron update`` does (a refusal leaves the stored plan as it was); so an
at-least-once topology replays whatever the moved instances had in flight.
Restarting sends the scheduler's ``RestartTopologyRequest`` for one container. Both
return once the scheduler accepted and raise :class:`ActuatorError`, whose text the loop
records with the action, when anything refused.
"""

from __future__ import annotations

from google.protobuf.message import Message

from engine.common.network import request
from engine.common.network.sockets import RequestTimeout
from engine.common.security.guard import SocketSecurity
from engine.messages import common_pb2, scheduler_pb2
from engine.spi.statemgr import StateManager
from engine.submitter.update import UpdateError, apply_update, plan_update

#: as long as ``heron update`` and ``heron restart`` wait for the scheduler
REQUEST_TIMEOUT_SECS = 30.0


class ActuatorError(RuntimeError):
    """The engine refused an action; the message says who refused and why."""


class SchedulerActuator:
    def __init__(self, state: StateManager, name: str, security: SocketSecurity | None,
                 timeout: float = REQUEST_TIMEOUT_SECS) -> None:
        self.state = state
        self.name = name
        self.security = security
        self.timeout = timeout

    def _scheduler_endpoint(self) -> str:
        scheduler = self.state.get("schedulers", self.name)
        if scheduler is None or not scheduler.http_endpoint:
            raise ActuatorError(f"the scheduler of {self.name!r} is not running (no "
                                f"schedulers/{self.name}); only a topology started with "
                                "`heron submit` on a scheduler service can be changed")
        return scheduler.http_endpoint

    def _send(self, endpoint: str, message: Message, what: str) -> str:
        try:
            response = request(endpoint, message, timeout=self.timeout,
                               security=self.security)
        except RequestTimeout:
            raise ActuatorError(f"the scheduler of {self.name!r} did not answer the {what} "
                                f"within {self.timeout:g}s") from None
        if response.status.status != common_pb2.OK:
            raise ActuatorError(f"the scheduler of {self.name!r} refused the {what}: "
                                f"{response.status.message}")
        return response.status.message

    def scale(self, component: str, parallelism: int) -> None:
        endpoint = self._scheduler_endpoint()
        try:
            plan = plan_update(self.state, self.name, {component: parallelism})
        except UpdateError as exc:
            raise ActuatorError(f"cannot scale {component!r} to {parallelism}: {exc}") from None
        what = f"update of {component!r} to parallelism {parallelism}"
        self._send(endpoint, scheduler_pb2.UpdateTopologyRequest(
            topology_name=self.name, current_packing_plan=plan.current.to_proto(),
            proposed_packing_plan=plan.proposed.to_proto()), what)
        try:
            apply_update(self.state, plan)
        except Exception as exc:  # take the scheduler back, so plan and containers agree
            try:
                self._send(endpoint, scheduler_pb2.UpdateTopologyRequest(
                    topology_name=self.name, current_packing_plan=plan.proposed.to_proto(),
                    proposed_packing_plan=plan.current.to_proto()), f"undoing the {what}")
            except ActuatorError as undo:
                raise ActuatorError(f"the scheduler accepted the {what} but storing the "
                                    f"plan failed ({exc}), and {undo}") from None
            raise ActuatorError(f"cannot store the plan of the {what} ({exc}); the "
                                "scheduler went back to the old plan") from None

    def restart_container(self, container: int) -> None:
        self._send(self._scheduler_endpoint(), scheduler_pb2.RestartTopologyRequest(
            topology_name=self.name, container_index=container),
            f"restart of container {container}")
