"""The scheduler service refuses every client without the topology's keys: a kill,
restart or update from an outsider (no keys, another topology's keys, or its own key
pair with the service's public key) never reaches the service, which keeps running its
topology and still answers the owner."""

from __future__ import annotations

import pickle
import time

import pytest
import zmq

from engine.common.network import encode, request
from engine.common.network.sockets import RequestTimeout
from engine.common.security.guard import SocketSecurity
from engine.common.security.keys import TopologyKeys
from engine.messages import common_pb2, scheduler_pb2
from tests.engine.scheduler.test_scheduler_service import start_service, wait_for, wait_location

pytestmark = pytest.mark.timeout(120)


class _Touch:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        from pathlib import Path
        return (Path.touch, (Path(self.path),))


def test_outsiders_cannot_kill_restart_or_update(launch_spec, sweep, topology_processes, tmp_path):
    proc = start_service(launch_spec)
    try:
        loc = wait_location(launch_spec, proc)
        assert wait_for(lambda: len(topology_processes()) == 2 + 3 + 1 + 8)  # supervisor, service
        before = sorted(p.pid for p in topology_processes())
        keys = TopologyKeys.load(launch_spec.home)
        own_public, own_secret = zmq.curve_keypair()
        marker = tmp_path / "pwned"
        messages = [encode(scheduler_pb2.KillTopologyRequest(topology_name="wc")),
                    encode(scheduler_pb2.KillTopologyRequest(topology_name="")),
                    encode(scheduler_pb2.RestartTopologyRequest(topology_name="wc",
                                                                container_index=-1)),
                    [b"heron.proto.scheduler.KillTopologyRequest", b"\xff\xff"],
                    [pickle.dumps(_Touch(marker))]]
        ctx = zmq.Context()
        sockets = []
        for setup in ("none", "other", "own"):
            sock = ctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            if setup == "other":
                SocketSecurity(TopologyKeys.generate("other", "other-1")).client(sock)
            elif setup == "own":
                sock.setsockopt(zmq.CURVE_SERVERKEY, keys.public_key)
                sock.setsockopt(zmq.CURVE_PUBLICKEY, own_public)
                sock.setsockopt(zmq.CURVE_SECRETKEY, own_secret)
            sock.connect(loc.http_endpoint)
            for frames in messages:
                try:
                    sock.send_multipart(frames, zmq.NOBLOCK)
                except zmq.Again:
                    pass
            sockets.append(sock)
        # an outsider's request gets no answer at all (the handshake never completes)
        with pytest.raises(RequestTimeout):
            request(loc.http_endpoint, scheduler_pb2.KillTopologyRequest(topology_name="wc"),
                    timeout=1.0, security=SocketSecurity(TopologyKeys.generate("x", "x-1")))
        time.sleep(1.0)
        for sock in sockets:
            sock.close()
        ctx.term()
        assert proc.poll() is None, "the service exited"
        assert sorted(p.pid for p in topology_processes()) == before, "something was restarted"
        assert not marker.exists()
        log = (launch_spec.log_dir / "scheduler.log").read_text()
        assert "refused" in log and "scheduler socket" in log
        # the owner is still served
        done = request(loc.http_endpoint, scheduler_pb2.KillTopologyRequest(topology_name="wc"),
                       timeout=60, security=SocketSecurity(keys))
        assert done.status.status == common_pb2.OK
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
