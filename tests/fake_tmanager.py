"""A Topology Master played by a test: the topology's keys, a secured zmq context with
its connection guard, a router socket where the Topology Master would listen, and a
state manager holding the one record a Stream Manager or Metrics Manager reads there
(where the Topology Master is). Tests run the real manager in a thread against it."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import zmq

from engine.common.launch import LaunchSpec, Submission
from engine.common.network import bind_router, ipc_dir
from engine.common.security.guard import ConnectionGuard
from engine.common.security.keys import TopologyKeys
from engine.messages import tmanager_pb2


class TManagerLocationOnly:
    """A state manager with one record: where topology ``name``'s Topology Master is."""

    def __init__(self, name: str, location: Any) -> None:
        self.name = name
        self.location = location

    def get(self, kind: str, name: str) -> Any:
        return self.location if kind == "tmanagers" and name == self.name else None


class FakeTManager:
    def __init__(self, name: str, project: Path, working_dir: Path) -> None:
        topology_id = f"{name}-{uuid.uuid4().hex[:12]}"
        self.spec = LaunchSpec(topology_name=name, topology_id=topology_id,
                               working_dir=str(working_dir),
                               submission=Submission(project=str(project), name=name))
        keys = TopologyKeys.generate(name, topology_id)
        keys.save(self.spec.home)
        self.ctx = zmq.Context()
        self.guard = ConnectionGuard.start(self.ctx, keys, process="test")
        self.tm, endpoint = bind_router(self.ctx, "tcp://127.0.0.1:0", guard=self.guard,
                                        kind="tmanager")
        self.state = TManagerLocationOnly(name, tmanager_pb2.TManagerLocation(
            topology_name=name, topology_id=topology_id, server_endpoint=endpoint))
        #: sockets the test opened in this context, closed with it
        self.sockets: list[zmq.Socket] = [self.tm]

    def close(self) -> None:
        """After the manager under test is closed: the sockets, guard, context and the
        topology's ipc socket files."""
        for sock in self.sockets:
            sock.close(linger=0)
        self.guard.stop()
        self.ctx.term()
        shutil.rmtree(ipc_dir(self.spec.topology_id), ignore_errors=True)
