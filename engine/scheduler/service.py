"""``python -m engine.scheduler --launch PATH``: the local scheduler as a service.

Started detached by ``heron submit`` (its own session; it does not watch its parent, so
it outlives the CLI). It launches the executors, binds a zmq ROUTER on a free loopback
port, records ``schedulers/<name>`` (ephemeral: it vanishes with this process) and serves:

* ``KillTopologyRequest``: stop every process, clean the topology's state, reply OK,
  exit 0;
* ``RestartTopologyRequest``: restart one container's executor (-1: all);
* ``UpdateTopologyRequest``: move to a proposed packing plan.

Each must name the topology this service runs: one with an empty or another
``topology_name`` is answered INVALID_TOPOLOGY_NAME and does nothing.

Malformed messages are logged with their sender and dropped. A request the scheduler
cannot carry out (a ``SlurmError`` from sbatch included) is answered NOTOK with the
cluster manager's one-line message, the old state in force; the service never dies of
it. SIGTERM/SIGINT kill the topology as a KillTopologyRequest would. SIGKILL of the
local scheduler leaves nothing behind either: the executors die with this process
(die_with_parent) and their children with them. The Slurm scheduler's service runs
under a supervisor (engine/scheduler/supervise.py) that starts it again when it dies;
the new one adopts the running jobs.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
import time

import zmq
from google.protobuf.message import Message

from engine.common.launch import LaunchSpec
from engine.common.network import MalformedMessage, bind_router, decode, encode
from engine.common.process import die_with_parent, write_pid_file
from engine.common.security.guard import ConnectionGuard
from engine.common.security.keys import KeysError
from engine.common.startup import launch_parser, load_launch, open_state, start
from engine.messages import common_pb2, scheduler_pb2
from engine.scheduler.registry import scheduler_for
from engine.scheduler.supervise import SERVING_MARKER, mark_serving, supervise, supervised
from engine.spi import ServiceScheduler
from engine.spi.packing_plan import PackingPlan
from engine.spi.statemgr import StateManager
from engine.statemgr.base import NodeExistsError

log = logging.getLogger("heron.scheduler")

PID_FILE = "scheduler.pid"


def main(argv: list[str] | None = None) -> int:
    def on_signal(_args: argparse.Namespace, signum: int) -> None:
        log.info("received %s; killing the topology", signal.Signals(signum).name)

    parser = launch_parser("python -m engine.scheduler", "Run a topology's scheduler service.")
    parser.add_argument("--serve", action="store_true",
                        help="serve under a supervisor (engine/scheduler/supervise.py)")
    # detached: no parent to watch, and a closing terminal is no reason to stop
    started = start(parser, argv, watch_parent=False, on_signal=on_signal, ignore_hangup=True)
    spec = load_launch(started.args.launch, log)
    if spec is None:
        return 1
    orphaned = threading.Event()
    if started.args.serve:
        _die_with_supervisor(started.stopping, orphaned)
    else:
        write_pid_file(spec.pid_dir / PID_FILE, os.getpid())
        if supervised(spec.scheduler):
            try:
                return supervise(spec, started.stopping)
            finally:
                (spec.pid_dir / PID_FILE).unlink(missing_ok=True)
    state = open_state(spec, log)
    if state is None:
        return 1
    try:
        return SchedulerService(spec, state, started.stopping, orphaned=orphaned,
                                supervised=started.args.serve).run()
    finally:
        state.close()
        if not started.args.serve:
            (spec.pid_dir / PID_FILE).unlink(missing_ok=True)


def _die_with_supervisor(stopping: threading.Event, orphaned: threading.Event) -> None:
    """A supervised service stops when its supervisor dies, but leaves the jobs running
    (SIGUSR1, not SIGTERM, which kills the topology): a new service adopts them, and
    ``heron kill`` finds them without one."""
    def handler(_signum: int, _frame: object) -> None:
        orphaned.set()
        stopping.set()

    signal.signal(signal.SIGUSR1, handler)
    die_with_parent(signal.SIGUSR1)


class SchedulerService:
    """The request loop around a :class:`~engine.spi.ServiceScheduler` (the local or the
    Slurm scheduler, :func:`engine.scheduler.registry.scheduler_for`)."""

    def __init__(self, spec: LaunchSpec, state: StateManager, stop: threading.Event, *,
                 orphaned: threading.Event | None = None, supervised: bool = False,
                 scheduler: ServiceScheduler | None = None) -> None:
        self.spec = spec
        self.state = state
        self.stop = stop
        #: set when the supervisor died: stop serving, leave the containers running
        self.orphaned = orphaned or threading.Event()
        self.supervised = supervised
        self.scheduler: ServiceScheduler = scheduler or scheduler_for(spec, state)

    def run(self) -> int:
        name = self.spec.topology_name
        ctx = zmq.Context()
        try:
            guard = ConnectionGuard.for_launch(ctx, self.spec, process="scheduler")
        except KeysError as exc:
            log.error("%s", exc)
            ctx.term()
            return 1
        sock, endpoint = bind_router(ctx, "tcp://127.0.0.1:0", guard=guard, kind="scheduler")
        try:
            try:
                self.scheduler.launch()
            except Exception as exc:
                log.error("cannot launch %s: %s", name, exc)
                if not self._restarted():
                    self.scheduler.stop()  # a first launch leaves nothing queued
                # a request the cluster can never satisfy is the submitter's to fix
                return 2 if getattr(exc, "unsatisfiable", False) else 1
            location = scheduler_pb2.SchedulerLocation(
                topology_name=name, http_endpoint=endpoint,
                job_page_link=[self.spec.home.resolve().as_uri()])
            try:
                self._record_location(location)
            except Exception as exc:
                log.error("cannot record schedulers/%s: %s", name, exc)
                if not self._restarted():
                    self.scheduler.stop()
                return 1
            if self.supervised:
                mark_serving(self.spec)
            log.info("scheduler of %s serving on %s", name, endpoint)
            return self._serve(sock)
        finally:
            sock.close(linger=1000)
            guard.stop()
            ctx.term()

    def _restarted(self) -> bool:
        """Whether this service replaces one that served (its supervisor restarted it):
        then the containers it failed to adopt are not its to cancel."""
        return self.supervised and (self.spec.pid_dir / SERVING_MARKER).exists()

    def _record_location(self, location: scheduler_pb2.SchedulerLocation) -> None:
        """``schedulers/NAME``, ephemeral; a dead predecessor's node (its ZooKeeper
        session not yet expired) is replaced."""
        name = self.spec.topology_name
        try:
            self.state.create("schedulers", name, location, ephemeral=True)
        except NodeExistsError:
            if not self.supervised:
                raise
            log.info("replacing schedulers/%s of the previous scheduler service", name)
            self.state.delete("schedulers", name)
            self.state.create("schedulers", name, location, ephemeral=True)

    def _serve(self, sock: zmq.Socket) -> int:
        reported: dict[str, str] = {}
        while not self.stop.is_set():
            reported = self._report_crash_loops(reported)
            if not sock.poll(200):
                continue
            frames = sock.recv_multipart()
            sender, payload = frames[0], frames[1:]
            try:
                message = decode(payload)
            except MalformedMessage as exc:
                log.warning("dropping a malformed message from %r: %s", sender, exc)
                continue
            refusal = self._refuse_other_topology(message)
            if refusal is not None:
                log.warning("refusing a request from %r: %s", sender, refusal.status.message)
                self._reply(sock, sender, refusal)
            elif isinstance(message, scheduler_pb2.KillTopologyRequest):
                response = self._kill(message)
                self._reply(sock, sender, response)
                if response.status.status == common_pb2.OK:
                    time.sleep(0.2)  # let the reply leave before the socket closes
                    return 0
            elif isinstance(message, scheduler_pb2.RestartTopologyRequest):
                self._reply(sock, sender, self._restart(message))
            elif isinstance(message, scheduler_pb2.UpdateTopologyRequest):
                self._reply(sock, sender, self._update(message))
            else:
                log.warning("unsupported request %s from %r", message.DESCRIPTOR.full_name,
                            sender)
                self._reply(sock, sender, _response(common_pb2.NOTOK,
                                                    f"unsupported request "
                                                    f"{message.DESCRIPTOR.full_name}"))
        if self.orphaned.is_set():
            log.warning("the supervisor is gone: stopping without touching the containers "
                        "(a new scheduler service adopts them; heron kill cancels them)")
            self.scheduler.close()
            return 1
        log.info("stopping: killing %s", self.spec.topology_name)
        self.scheduler.kill()
        return 0

    def _report_crash_loops(self, reported: dict[str, str]) -> dict[str, str]:
        """Log an executor that starts crash-looping, and when it stops (it is retried
        for ever under the restart policy; its records are in restarts/)."""
        now = self.scheduler.crash_looping()
        for name in sorted(set(now) - set(reported)):
            log.error("%s is crash-looping (exits with no progress; retried with backoff): "
                      "%s", name, now[name])
        for name in sorted(set(reported) - set(now)):
            log.info("%s is running again", name)
        return now

    def _refuse_other_topology(self, message: Message) -> scheduler_pb2.SchedulerResponse | None:
        """The refusal of a kill, restart or update that does not name the topology this
        service runs (empty, or another), or None when it does. A refused request does
        nothing: an empty name used to mean "whatever this scheduler runs"."""
        if not isinstance(message, _NAMED_REQUESTS):
            return None
        name = self.spec.topology_name
        kind = message.DESCRIPTOR.name
        if not message.topology_name:
            return _response(common_pb2.INVALID_TOPOLOGY_NAME,
                             f"{kind} refused: it names no topology (topology_name is "
                             f"empty); this scheduler runs {name!r}")
        if message.topology_name != name:
            return _response(common_pb2.INVALID_TOPOLOGY_NAME,
                             f"{kind} refused: this scheduler runs {name!r}, not "
                             f"{message.topology_name!r}")
        return None

    def _kill(self, request: scheduler_pb2.KillTopologyRequest) -> scheduler_pb2.SchedulerResponse:
        name = self.spec.topology_name
        log.info("kill requested")
        try:
            self.scheduler.kill()
        except Exception as exc:  # noqa: BLE001 - any scheduler error is a refusal
            return _refusal(f"kill of {name}", exc)
        return _response(common_pb2.OK, f"killed {name}")

    def _restart(self, request: scheduler_pb2.RestartTopologyRequest
                 ) -> scheduler_pb2.SchedulerResponse:
        name = self.spec.topology_name
        index = request.container_index if request.HasField("container_index") else -1
        try:
            self.scheduler.restart(index)
        except Exception as exc:  # noqa: BLE001 - any scheduler error is a refusal
            return _refusal(f"restart of {name}", exc)
        what = "every container" if index == -1 else f"container {index}"
        return _response(common_pb2.OK, f"restarted {what} of {name}")

    def _update(self, request: scheduler_pb2.UpdateTopologyRequest
                ) -> scheduler_pb2.SchedulerResponse:
        if not request.HasField("proposed_packing_plan"):
            return _response(common_pb2.NOTOK, "an update needs the proposed packing plan")
        try:
            proposed = PackingPlan.from_proto(request.proposed_packing_plan)
            added, removed = self.scheduler.update(proposed)
        except Exception as exc:  # noqa: BLE001 - any scheduler error is a refusal
            return _refusal(f"update of {self.spec.topology_name}", exc)
        return _response(common_pb2.OK, f"packing plan {proposed.id}: containers added "
                                        f"{added or 'none'}, removed {removed or 'none'}")

    @staticmethod
    def _reply(sock: zmq.Socket, sender: bytes, response: Message) -> None:
        try:
            sock.send_multipart([sender, *encode(response)])
        except zmq.ZMQError as exc:
            log.warning("cannot answer %r: %s", sender, exc)


#: requests that act on the topology, refused unless their topology_name is this one's
_NAMED_REQUESTS = (scheduler_pb2.KillTopologyRequest, scheduler_pb2.RestartTopologyRequest,
                   scheduler_pb2.UpdateTopologyRequest)


def _refusal(what: str, exc: BaseException) -> scheduler_pb2.SchedulerResponse:
    """NOTOK with the scheduler's (or cluster manager's) one-line message; the service
    goes on serving, the old state in force."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, (ValueError, RuntimeError)) or getattr(exc, "unsatisfiable", None) \
            is not None:
        log.warning("%s refused: %s", what, message)
    else:
        log.exception("%s failed", what)
    return _response(common_pb2.NOTOK, message)


def _response(code: common_pb2.StatusCode, message: str = "") -> scheduler_pb2.SchedulerResponse:
    return scheduler_pb2.SchedulerResponse(status=common_pb2.Status(status=code, message=message))
