"""The container shell's server: a thread of the container's executor.

Why inside the executor: the executor is the container's first and last process (the
cluster manager starts it, it supervises the rest), so its shell is up whenever anything
of the container is, keeps one endpoint for the container's whole life (a Stream Manager
restart does not move it), and still answers while every other process of the container
is crash-looping, which is when a user needs the logs most.

It binds a ROUTER on the node's address (``tcp://<bind host>:0``) behind the topology's
keys (a peer without them is refused during the handshake and counted under the socket
kind ``shell``), answers ``ListLogsRequest`` and ``ReadLogRequest`` for the container's
``logs/`` folder with the rules of :mod:`engine.shell.logfiles`, refuses a request
naming another submission of the topology, and drops a malformed message with a log
line. A request is answered from the file system in the server's thread; each answer is
bounded (``MAX_LINES`` lines, ``MAX_READ_BYTES`` bytes).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from pathlib import Path

import zmq
from google.protobuf.message import Message

from engine.common.launch import LaunchSpec
from engine.common.network.codec import MalformedMessage, decode, encode
from engine.common.network.sockets import bind_router
from engine.common.process.stopping import STOP_POLL_MS
from engine.common.security.guard import ConnectionGuard
from engine.messages import common_pb2, shell_pb2
from engine.shell.logfiles import (
    MAX_LINES,
    MAX_READ_BYTES,
    LogFileMissing,
    LogNameRefused,
    find_log,
    list_logs,
    read_range,
    tail_bytes,
)

log = logging.getLogger("heron.shell")

#: the kind the guard counts refused shell connections under
SOCKET_KIND = "shell"


def _status(code: common_pb2.StatusCode, message: str = "") -> common_pb2.Status:
    return common_pb2.Status(status=code, message=message)


def node_name() -> str:
    """The name of the node this container runs on: Slurm's name for it inside a job
    (several slurmd can share one host, and only Slurm's name tells them apart), else
    the host name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()


class ContainerShell:
    """Serves one container's log files until :meth:`stop`."""

    def __init__(self, topology_name: str, topology_id: str, container: int,
                 working_dir: Path, ctx: zmq.Context, guard: ConnectionGuard,
                 bind_host: str) -> None:
        self.topology_name = topology_name
        self.topology_id = topology_id
        self.container = container
        self.working_dir = Path(working_dir)
        self.host = node_name()
        self._sock, self.endpoint = bind_router(ctx, f"tcp://{bind_host}:0", guard=guard,
                                                kind=SOCKET_KIND)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"shell-{container}",
                                        daemon=True)

    @classmethod
    def for_launch(cls, spec: LaunchSpec, container: int, ctx: zmq.Context,
                   guard: ConnectionGuard) -> ContainerShell:
        """The shell of ``container`` started from its launch spec, serving."""
        shell = cls(spec.topology_name, spec.topology_id, container, Path(spec.working_dir),
                    ctx, guard, spec.bind_host)
        shell._thread.start()
        log.info("container %d shell serving its logs on %s", container, shell.endpoint)
        return shell

    def stop(self) -> None:
        """Stop serving and close the socket (before the guard and context go)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        else:
            self._sock.close(linger=0)

    # -- the server thread -------------------------------------------------------------
    def _serve(self) -> None:
        try:
            while not self._stop.is_set():
                if not self._sock.poll(STOP_POLL_MS):
                    continue
                frames = self._sock.recv_multipart()
                sender, payload = frames[0], frames[1:]
                try:
                    message = decode(payload)
                except MalformedMessage as exc:
                    log.warning("dropping a malformed message from %r: %s", sender, exc)
                    continue
                try:
                    response = self.answer(message)
                except Exception:  # a bug answering must not take the shell down
                    log.exception("cannot answer %s", message.DESCRIPTOR.full_name)
                    response = shell_pb2.ReadLogResponse(
                        status=_status(common_pb2.NOTOK, "the shell failed; see executor log"))
                try:
                    self._sock.send_multipart([sender, *encode(response)], zmq.NOBLOCK)
                except zmq.ZMQError as exc:
                    log.warning("cannot answer %r: %s", sender, exc)
        finally:
            self._sock.close(linger=0)

    def answer(self, message: Message) -> Message:
        """The response to one request (also what the tests call directly)."""
        if isinstance(message, shell_pb2.ListLogsRequest):
            refusal = self._refusal(message.topology_id)
            response = shell_pb2.ListLogsResponse(container=self.container, host=self.host)
            if refusal:
                response.status.CopyFrom(_status(common_pb2.INVALID_TOPOLOGY_NAME, refusal))
                return response
            response.status.CopyFrom(_status(common_pb2.OK))
            for f in list_logs(self.working_dir):
                response.files.add(name=f.name, size=f.size, mtime=f.mtime)
            return response
        if isinstance(message, shell_pb2.ReadLogRequest):
            return self._read(message)
        log.warning("unsupported request %s", message.DESCRIPTOR.full_name)
        return shell_pb2.ReadLogResponse(status=_status(
            common_pb2.NOTOK, f"a container shell does not answer {message.DESCRIPTOR.full_name}"
                              " (it answers ListLogsRequest and ReadLogRequest)"))

    def _refusal(self, topology_id: str) -> str:
        if topology_id != self.topology_id:
            return (f"this shell serves {self.topology_id} (container {self.container} of "
                    f"{self.topology_name!r}), not {topology_id or 'an unnamed submission'!r}")
        return ""

    def _read(self, request: shell_pb2.ReadLogRequest) -> shell_pb2.ReadLogResponse:
        refusal = self._refusal(request.topology_id)
        if refusal:
            return shell_pb2.ReadLogResponse(
                status=_status(common_pb2.INVALID_TOPOLOGY_NAME, refusal))
        owner = f"container {self.container} of {self.topology_name!r} on {self.host}"
        try:
            found = find_log(owner, self.working_dir, request.name)
            max_bytes = min(request.max_bytes or MAX_READ_BYTES, MAX_READ_BYTES)
            if request.HasField("last_lines"):
                lines = min(max(request.last_lines, 0), MAX_LINES)
                data, offset, size = tail_bytes(found.path, lines, max_bytes)
            else:
                data, offset, size = read_range(found.path, request.offset, max_bytes)
        except (LogNameRefused, LogFileMissing) as exc:
            return shell_pb2.ReadLogResponse(status=_status(common_pb2.NOTOK, str(exc)))
        except OSError as exc:
            return shell_pb2.ReadLogResponse(status=_status(
                common_pb2.NOTOK, f"{request.name} of {owner} cannot be read: {exc}"))
        return shell_pb2.ReadLogResponse(status=_status(common_pb2.OK), data=data,
                                         offset=offset, size=size)
