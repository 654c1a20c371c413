"""Finding a topology's container shells and asking them for log files.

The shells publish themselves through the state manager: container 0's in the Topology
Master's location (``tmanagers/NAME``), every other container's in its Stream
Manager's entry of the physical plan (``pplans/NAME``). A container that has not
registered yet (or a local topology, whose files are on this machine) has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from google.protobuf.message import Message

from engine.common.network import request
from engine.common.network.sockets import RequestTimeout
from engine.common.security.guard import SocketSecurity
from engine.messages import common_pb2, shell_pb2
from engine.shell.logfiles import MAX_READ_BYTES

#: how long one request to a shell may take
SHELL_TIMEOUT_SECS = 10.0


class ShellError(Exception):
    """A shell refused a request or did not answer; the text names the container."""


@dataclass(frozen=True)
class RemoteLogFile:
    container: int
    host: str
    name: str
    size: int
    mtime: float


class NodeReader(Protocol):
    """What ``container_shells`` reads: a state manager's ``get`` (or the tracker's cache
    of one topology's nodes)."""

    def get(self, kind: str, name: str) -> Any: ...


def container_shells(state: NodeReader, name: str) -> dict[int, str]:
    """``{container: shell endpoint}`` of ``name``'s running containers, from the state."""
    shells: dict[int, str] = {}
    tm = state.get("tmanagers", name)
    if tm is not None and tm.shell_endpoint:
        shells[0] = tm.shell_endpoint
    pplan = state.get("pplans", name)
    if pplan is not None:
        for stmgr in pplan.stmgrs:
            if stmgr.shell_endpoint:
                shells[stmgr.container_id] = stmgr.shell_endpoint
    return dict(sorted(shells.items()))


class ShellClient:
    """Requests to one container's shell, with the topology's keys."""

    def __init__(self, container: int, endpoint: str, topology_id: str,
                 security: SocketSecurity | None,
                 timeout: float = SHELL_TIMEOUT_SECS) -> None:
        self.container = container
        self.endpoint = endpoint
        self.topology_id = topology_id
        self.security = security
        self.timeout = timeout

    def _ask(self, message: Message) -> Any:
        try:
            response = request(self.endpoint, message, self.timeout, security=self.security)
        except RequestTimeout as exc:
            raise ShellError(f"container {self.container}'s shell: {exc}") from None
        if response.status.status != common_pb2.OK:
            raise ShellError(f"container {self.container}'s shell: {response.status.message}")
        return response

    def list_logs(self) -> list[RemoteLogFile]:
        response = self._ask(shell_pb2.ListLogsRequest(topology_id=self.topology_id))
        return [RemoteLogFile(self.container, response.host, f.name, f.size, f.mtime)
                for f in response.files]

    def tail(self, name: str, lines: int) -> bytes:
        """The last ``lines`` lines of the container's log file ``name``."""
        return self._ask(shell_pb2.ReadLogRequest(topology_id=self.topology_id, name=name,
                                                  last_lines=lines)).data

    def read(self, name: str, offset: int, max_bytes: int = MAX_READ_BYTES
             ) -> tuple[bytes, int, int]:
        """``(data, where data starts, file size)`` of ``name`` from ``offset``."""
        response = self._ask(shell_pb2.ReadLogRequest(topology_id=self.topology_id, name=name,
                                                      offset=offset, max_bytes=max_bytes))
        return response.data, response.offset, response.size
