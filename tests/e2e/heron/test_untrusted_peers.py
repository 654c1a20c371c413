"""Peers that do not hold a topology's keys get nothing in, on every TCP socket kind.

Word count runs on two containers with pickled tuples (the serializer that would run an
attacker's code if a payload ever reached it). While it runs, three kinds of outsider
connect to each Topology Master socket (the Stream Managers' control channel, and the
controller the CLI uses) and each Stream Manager's data socket (the Metrics Managers and
the Stream Managers' instance sockets are Unix sockets in an owner-only directory:
another user, uid 65534, cannot connect to them at all): a client with no keys,
one holding another topology's keys, and one that knows the server's public key but
not the topology's secret. Each sends well-formed messages (a tuple batch whose pickle
would create a marker file, a registration claiming to be a Stream Manager, a
deactivate request) and malformed frames. None of it is executed: no marker file, no
process restarted, the counts are exact, the topology was never deactivated, and the
refusals are counted in the processes' metrics. The scheduler service's socket gets the
same treatment in tests/engine/scheduler/test_scheduler_untrusted.py.
"""

from __future__ import annotations

import collections
import os
import pickle
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq

from engine.common.network import encode, ipc_dir
from engine.common.security.guard import SocketSecurity
from engine.common.security.keys import TopologyKeys
from engine.messages import stmgr_pb2, tmanager_pb2, tuple_pb2
from tests.e2e.heron.helpers import REPO, HeronRun, log_warnings, wait_until

EXAMPLE = REPO / "examples" / "wordcount"
pytestmark = pytest.mark.timeout(180)


class _Touch:
    """Unpickling this creates ``path``: the proof that a payload was decoded."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def outsiders(public_key: bytes) -> dict[str, SocketSecurity | None | tuple[bytes, bytes]]:
    """Client set-ups an attacker could have: none, another topology's keys, and the
    server's public key with a key pair of its own."""
    own_public, own_secret = zmq.curve_keypair()
    return {"no keys": None,
            "another topology's keys": SocketSecurity(TopologyKeys.generate("other", "other-1")),
            "its own key pair": (own_public, own_secret)}


def attack(endpoint: str, setup, frames_list: list[list[bytes]], ctx: zmq.Context) -> zmq.Socket:
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.IDENTITY, b"stmgr-1")  # claims to be a Stream Manager
    if isinstance(setup, SocketSecurity):
        setup.client(sock)
    elif isinstance(setup, tuple):
        sock.setsockopt(zmq.CURVE_SERVERKEY, SERVER_KEY[0])
        sock.setsockopt(zmq.CURVE_PUBLICKEY, setup[0])
        sock.setsockopt(zmq.CURVE_SECRETKEY, setup[1])
    sock.connect(endpoint)
    for frames in frames_list:
        try:
            sock.send_multipart(frames, zmq.NOBLOCK)
        except zmq.Again:
            pass  # nothing connected: the handshake never succeeded
    return sock


SERVER_KEY: list[bytes] = []

#: run as another user: try each Unix socket named on the command line
_CONNECT_AS_OTHER_USER = """
import socket, sys
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        print("CONNECTED", path)
    except OSError as exc:
        print(type(exc).__name__, path)
    finally:
        s.close()
"""


def as_nobody() -> None:
    os.setgroups([])
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)


def ipc_sockets_refuse_other_users(topology_id: str) -> None:
    """The Stream Managers' instance sockets and the Metrics Managers' sockets are Unix
    sockets in an owner-only directory: another user cannot even connect."""
    paths = sorted(str(p) for p in ipc_dir(topology_id).iterdir())
    assert len(paths) >= 6, paths  # per container: instances, spouts, metrics
    if os.geteuid() != 0:
        return  # only root can become another user here; the directory mode is checked
    # the system interpreter: the test's own may live where uid 65534 cannot read
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    out = subprocess.run([python, "-c", _CONNECT_AS_OTHER_USER, *paths], cwd="/",
                         preexec_fn=as_nobody, capture_output=True, text=True, timeout=30)
    lines = out.stdout.split("\n")
    assert out.returncode == 0, out.stderr
    assert all(line.startswith("PermissionError") for line in lines if line), out.stdout


def hostile_messages(marker: Path, name: str, topology_id: str, tasks: dict) -> list[list[bytes]]:
    spout = tasks["word_spout"][0]
    batch = tuple_pb2.TupleBatch(src_task_id=spout,
                                 values=[pickle.dumps([_Touch(marker)])] * 3)
    batch.stream.component_name = "word_spout"
    batch.stream.id = "default"
    tuples = stmgr_pb2.TupleStreamMessage(task_id=tasks["count_bolt"][0], src_task_id=spout,
                                          num_tuples=3, data=batch.SerializeToString())
    register = tmanager_pb2.StMgrRegisterRequest()
    register.stmgr.id = "stmgr-1"
    register.stmgr.data_endpoint = "tcp://127.0.0.1:1"
    deactivate = tmanager_pb2.TopologyDeactivateRequest(topology_name=name, topology_id=topology_id)
    return [encode(tuples), encode(register), encode(deactivate),
            [b"heron.proto.stmgr.TupleStreamMessage", b"\xff\x00garbage"],
            [b"one frame only"], [b"x" * 70_000, b"", b"", b""]]


def test_outsiders_are_refused_on_every_socket_and_nothing_they_send_runs(tmp_path,
                                                                            isolated_imports):
    seed, n = 17, 60_000
    marker = tmp_path / "pwned"
    run = HeronRun(EXAMPLE, "wordcount", tmp_path / "heron",
                   options={"wordcount.seed": seed, "wordcount.max_words": n,
                            "topology.tuple.serializer": "pickle"},
                   workers=2, keep_all=False)
    ctx = zmq.Context()
    sockets: list[zmq.Socket] = []
    try:
        run.start()
        keys = TopologyKeys.load(run.working_dir, topology_id=run.pplan.topology.id)
        SERVER_KEY[:] = [keys.public_key]
        location = run.location
        targets = {"tmanager": location.server_endpoint,
                   "controller": location.controller_endpoint,
                   **{f"{s.id} data": s.data_endpoint for s in run.pplan.stmgrs}}
        assert all(e.startswith("tcp://") for e in targets.values()), targets
        messages = hostile_messages(marker, "wordcount", run.pplan.topology.id,
                                    run.placement.tasks)
        pids_before = {name: proc.pid for name, proc in run.record_processes().items()}
        assert (os.stat(ipc_dir(run.pplan.topology.id)).st_mode & 0o077) == 0
        ipc_sockets_refuse_other_users(run.pplan.topology.id)
        for setup in outsiders(keys.public_key).values():
            for endpoint in targets.values():
                sockets.append(attack(endpoint, setup, messages, ctx))
        time.sleep(1.5)  # the outsiders keep retrying their handshakes meanwhile

        def refused() -> dict[str, int]:
            metrics = run.metrics()
            return {inst: int(values.get("__connections-refused", 0))
                    for inst, values in metrics.items() if "__connections-refused" in values}

        counted = wait_until(lambda: (lambda r: r if len(r) == 3 and all(r.values()) else None)(
            refused()), timeout=20, interval=0.5)
        assert counted, f"refusals not counted everywhere: {refused()}"
        assert set(counted) == {"heron-tmanager", "stmgr-1", "stmgr-2"}
        for sock in sockets:
            sock.close(linger=0)
        sockets.clear()
        # A bare TCP client that writes garbage before any handshake gets nowhere either.
        for endpoint in targets.values():
            host, port = endpoint[len("tcp://"):].rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=5) as raw:
                raw.sendall(b"\xff" * 64 + pickle.dumps([_Touch(marker)]))
        result = run.finish(time_limit=120)
        pids_after = {name: proc.pid for name, proc in run.processes.items()}
    finally:
        for sock in sockets:
            sock.close(linger=0)
        ctx.term()
        run.close()
    assert result.reason == "finished", (result.error, log_warnings(result))
    assert not marker.exists(), "an outsider's pickle was decoded"
    # nobody restarted or crashed: every process the run started is the one it started
    assert {k: v for k, v in pids_after.items() if k in pids_before} == pids_before
    sys.path.insert(0, str(EXAMPLE / "src"))
    try:
        from spouts.words import generate_words
    finally:
        sys.path.remove(str(EXAMPLE / "src"))
    cap = result.capture.streams[("count_bolt", "default")]
    counts = {key[0]: value for key, value in cap.latest.items()}
    assert counts == collections.Counter(generate_words(seed, n))
    assert cap.count == n  # not one tuple more: nothing injected was counted
    logs = "\n".join(p.read_text(errors="replace") for p in Path(result.log_dir).glob("*.log"))
    assert "not this topology's key" in logs  # a ZAP refusal, logged with the peer
    assert "refused a connection on the data socket" in logs
