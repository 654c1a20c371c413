"""A cluster container's logs, read where they are written, through its shell.

The "nodes" here are directories this machine's `heron logs` and tracker are never told
about: the only way to their files is the shell each container publishes in the state
(container 0's in the Topology Master location, container 1's in the physical plan),
reached with the topology's keys. tests/cluster/test_slurm_topology.py does the same on
real Slurm nodes whose files live in another mount namespace.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
import zmq
from click.testing import CliRunner

from engine.common.launch import StateManagerSpec
from engine.common.network import request
from engine.common.network.sockets import RequestTimeout, connect_dealer
from engine.common.security.guard import ConnectionGuard, SocketSecurity
from engine.common.security.keys import TopologyKeys
from engine.messages import common_pb2, physical_plan_pb2, shell_pb2, tmanager_pb2, topology_pb2
from engine.shell.client import ShellClient, ShellError, container_shells
from engine.shell.logfiles import MAX_READ_BYTES
from engine.shell.server import ContainerShell
from engine.tools.cli.logs_command import LocalLogs, _poll_lines
from engine.tools.cli.main import main

pytestmark = pytest.mark.timeout(60)

NAME = "remote_wc"
TOPOLOGY_ID = "remote_wc-1700000000-abc"


class Node:
    """One container's working directory and its shell, as a cluster node runs them."""

    def __init__(self, root: Path, container: int, keys: TopologyKeys) -> None:
        self.container = container
        self.working_dir = root / f"node-{container}" / f"container-{container}"
        (self.working_dir / "logs").mkdir(parents=True)
        self.ctx = zmq.Context()
        self.guard = ConnectionGuard.start(self.ctx, keys, process=f"shell-{container}")
        self.shell = ContainerShell(NAME, TOPOLOGY_ID, container, self.working_dir, self.ctx,
                                    self.guard, "127.0.0.1")
        self.shell._thread.start()

    def write(self, name: str, text: str) -> Path:
        path = self.working_dir / "logs" / name
        with open(path, "a") as fh:
            fh.write(text)
        return path

    def close(self) -> None:
        if self.ctx.closed:
            return
        self.shell.stop()
        self.guard.stop()
        self.ctx.term()


@pytest.fixture
def keys() -> TopologyKeys:
    return TopologyKeys.generate(NAME, TOPOLOGY_ID)


@pytest.fixture
def nodes(tmp_path, keys):
    made = [Node(tmp_path, c, keys) for c in (0, 1)]
    made[0].write("heron-tmanager.log", "tm starting\ntm serving\n")
    made[0].write("executor-0.log", "executor 0 up\n")
    made[1].write("stmgr-1.log", "stmgr one\nstmgr two\nstmgr three\n")
    made[1].write("container_1_count_3.log", "".join(f"counted {i}\n" for i in range(50)))
    made[1].write("container_1_split_2.log", "split up\n")
    yield made
    for node in made:
        node.close()


@pytest.fixture
def home(tmp_path, nodes, keys):
    """HERON_HOME whose state says NAME runs on a cluster: its containers' shells are
    published as the Topology Master and the Stream Manager publish them; this machine
    has only the scheduler's log."""
    home = tmp_path / "home"
    spec = StateManagerSpec(kind="local", root=str(home / "state"))
    with spec.open() as state:
        state.create("topologies", NAME, topology_pb2.Topology(id=TOPOLOGY_ID, name=NAME))
        state.create("keys", NAME, keys.to_proto())
        state.create("tmanagers", NAME, tmanager_pb2.TManagerLocation(
            topology_name=NAME, topology_id=TOPOLOGY_ID, host="127.0.0.1",
            shell_endpoint=nodes[0].shell.endpoint))
        pplan = physical_plan_pb2.PhysicalPlan()
        pplan.stmgrs.add(id="stmgr-1", container_id=1, host_name="node-1",
                         cwd=str(nodes[1].working_dir), shell_endpoint=nodes[1].shell.endpoint)
        state.create("pplans", NAME, pplan)
    local_logs = home / "topologies" / NAME / "logs"
    local_logs.mkdir(parents=True)
    (local_logs / "scheduler.log").write_text("scheduler submitted 2 jobs\n")
    return home


def heron(home: Path, *args: str):
    return CliRunner().invoke(main, [*args[:1], "--home", str(home), *args[1:]],
                              catch_exceptions=False)


def test_a_shell_in_a_slurm_job_names_slurm_s_node(keys, tmp_path, monkeypatch):
    """Several slurmd on one host share its host name; the job's SLURMD_NODENAME is the
    node `heron logs` must name."""
    monkeypatch.setenv("SLURMD_NODENAME", "node7")
    node = Node(tmp_path, 1, keys)
    try:
        node.write("stmgr-1.log", "started\n")
        client = ShellClient(1, node.shell.endpoint, TOPOLOGY_ID, SocketSecurity(keys))
        assert {f.host for f in client.list_logs()} == {"node7"}
    finally:
        node.close()


def test_the_shells_are_found_through_the_state(home, nodes):
    with StateManagerSpec(kind="local", root=str(home / "state")).open() as state:
        assert container_shells(state, NAME) == {0: nodes[0].shell.endpoint,
                                                 1: nodes[1].shell.endpoint}
        assert container_shells(state, "other") == {}


def test_a_shell_lists_tails_and_reads_its_containers_files(nodes, keys):
    client = ShellClient(1, nodes[1].shell.endpoint, TOPOLOGY_ID, SocketSecurity(keys))
    listed = client.list_logs()
    assert [f.name for f in listed] == ["container_1_count_3.log", "container_1_split_2.log",
                                        "stmgr-1.log"]
    assert {f.host for f in listed} == {socket.gethostname()}
    assert client.tail("container_1_count_3.log", 2) == b"counted 48\ncounted 49\n"
    data, start, size = client.read("stmgr-1.log", 10)
    whole = b"stmgr one\nstmgr two\nstmgr three\n"
    assert data == whole[10:] and start == 10 and size == len(whole)
    with pytest.raises(ShellError, match="container 1 .* has no log file 'nope.log'.*stmgr-1.log"):
        client.tail("nope.log", 5)


def test_a_large_file_comes_back_in_bounded_pieces(nodes, keys):
    path = nodes[1].write("container_1_big_9.log", "x" * (MAX_READ_BYTES * 2 + 100) + "\n")
    client = ShellClient(1, nodes[1].shell.endpoint, TOPOLOGY_ID, SocketSecurity(keys))
    offset, pieces = 0, []
    while True:
        data, start, size = client.read("container_1_big_9.log", offset)
        assert len(data) <= MAX_READ_BYTES
        if not data:
            break
        pieces.append(data)
        offset = start + len(data)
    assert b"".join(pieces) == path.read_bytes()
    assert len(pieces) == 3
    assert len(client.tail("container_1_big_9.log", 1)) == MAX_READ_BYTES


def test_paths_links_and_other_submissions_are_refused(nodes, keys, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("not for you\n")
    os.symlink(secret, nodes[1].working_dir / "logs" / "outside.log")
    client = ShellClient(1, nodes[1].shell.endpoint, TOPOLOGY_ID, SocketSecurity(keys))
    assert "outside.log" not in [f.name for f in client.list_logs()]
    with pytest.raises(ShellError, match="symbolic link; only regular files are served"):
        client.tail("outside.log", 5)
    for name in ("../../secret.txt", str(secret), "..", "a/b.log"):
        with pytest.raises(ShellError, match="is a path"):
            client.read(name, 0)
    stale = ShellClient(1, nodes[1].shell.endpoint, "remote_wc-1600000000-old",
                        SocketSecurity(keys))
    with pytest.raises(ShellError, match="this shell serves remote_wc-1700000000-abc"):
        stale.list_logs()


def test_a_client_without_the_topology_keys_is_refused_and_the_shell_goes_on(nodes, keys):
    endpoint = nodes[1].shell.endpoint
    outsider = SocketSecurity(TopologyKeys.generate("other", "other-1"))
    with pytest.raises(RequestTimeout):
        request(endpoint, shell_pb2.ListLogsRequest(topology_id=TOPOLOGY_ID), 1.5,
                security=outsider)
    assert nodes[1].guard.refusals["shell"] >= 1
    # a keyed peer sending garbage gets no answer, and the shell keeps serving
    ctx = zmq.Context()
    try:
        sock = connect_dealer(ctx, endpoint, "garbage", security=SocketSecurity(keys))
        sock.send_multipart([b"heron.proto.shell.ReadLogRequest", b"\xff\xff\xff"])
        sock.send_multipart([b"not a type"])
        assert not sock.poll(500)
        sock.close(linger=0)
    finally:
        ctx.term()
    answer = request(endpoint, shell_pb2.ListLogsRequest(topology_id=TOPOLOGY_ID), 5,
                     security=SocketSecurity(keys))
    assert answer.status.status == common_pb2.OK and len(answer.files) == 3


def test_heron_logs_lists_every_container_and_this_machines_files(home, nodes):
    result = heron(home, "logs", NAME)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    by_name = {line.split()[0]: line for line in lines}
    assert set(by_name) == {"scheduler.log", "heron-tmanager.log", "executor-0.log",
                            "stmgr-1.log", "container_1_count_3.log",
                            "container_1_split_2.log"}
    host = socket.gethostname()
    assert by_name["stmgr-1.log"].endswith(f"(container 1 on {host})")
    assert by_name["heron-tmanager.log"].endswith(f"(container 0 on {host})")
    assert "container" not in by_name["scheduler.log"].split(None, 1)[1]


def test_heron_logs_of_a_component_tails_it_from_its_node(home, nodes):
    result = heron(home, "logs", NAME, "count", "-n", "3")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["counted 47", "counted 48", "counted 49"]
    result = heron(home, "logs", NAME, "nope")
    assert result.exit_code == 2
    assert "no logs for 'nope'" in result.output and "components: count, split" in result.output


def test_a_container_whose_shell_is_gone_is_named_and_the_others_still_show(home, nodes):
    nodes[1].close()
    from engine.shell import client as shell_client

    saved = shell_client.SHELL_TIMEOUT_SECS
    shell_client.SHELL_TIMEOUT_SECS = 1.0
    try:
        result = CliRunner().invoke(main, ["logs", "--home", str(home), NAME],
                                    catch_exceptions=False)
    finally:
        shell_client.SHELL_TIMEOUT_SECS = saved
    assert result.exit_code == 0, result.output
    assert "container 1's shell: no answer from" in result.output
    assert "heron-tmanager.log" in result.output and "stmgr-1.log" not in result.output


def test_following_reads_what_a_remote_container_appends(home, nodes, keys):
    from engine.tools.cli.logs_command import LogEntry, ShellLogs

    client = ShellClient(1, nodes[1].shell.endpoint, TOPOLOGY_ID, SocketSecurity(keys))
    size = (nodes[1].working_dir / "logs" / "stmgr-1.log").stat().st_size
    source = ShellLogs(client, "node-1", [])
    lines = _poll_lines([(source, LogEntry("stmgr-1.log", size, 0.0))])
    nodes[1].write("stmgr-1.log", "stmgr four\nstmgr fi")
    assert next(lines)[1] == "stmgr four"
    nodes[1].write("stmgr-1.log", "ve\n")
    assert next(lines)[1] == "stmgr five"
    # a local file, truncated under the follower, is read again from its start
    local = LocalLogs(home / "topologies" / NAME)
    path = home / "topologies" / NAME / "logs" / "scheduler.log"
    lines = _poll_lines([(local, LogEntry("scheduler.log", path.stat().st_size, 0.0))])
    path.write_text("new run\n")
    assert next(lines)[1] == "new run"


def test_the_tracker_lists_and_serves_remote_containers_files(home, nodes):
    from fastapi.testclient import TestClient

    from engine.common.security.access_token import auth_header, load_or_create
    from engine.tools.tracker import TrackerSettings, create_app

    spec = StateManagerSpec(kind="local", root=str(home / "state"))
    app = create_app(spec, TrackerSettings(poll_interval=0.5, tm_timeout=1.5, home=home))
    with TestClient(app, headers=auth_header(load_or_create(home))) as http:
        listed = http.get("/topologies/logfiles", params={"topology": NAME})
        assert listed.status_code == 200, listed.text
        by_name = {f["name"]: f for f in listed.json()}
        assert by_name["container_1_count_3.log"]["host"] == socket.gethostname()
        assert by_name["container_1_count_3.log"]["container"] == 1
        assert by_name["heron-tmanager.log"]["container"] == 0
        assert by_name["scheduler.log"]["host"] is None
        text = http.get("/topologies/logfile", params={"topology": NAME,
                                                        "name": "container_1_count_3.log",
                                                        "lines": 2})
        assert text.status_code == 200 and text.text == "counted 48\ncounted 49\n"
        local = http.get("/topologies/logfile", params={"topology": NAME,
                                                         "name": "scheduler.log"})
        assert local.text == "scheduler submitted 2 jobs\n"
        missing = http.get("/topologies/logfile", params={"topology": NAME, "name": "x.log"})
        assert missing.status_code == 404 and "stmgr-1.log" in missing.json()["detail"]
        assert http.get("/topologies/logfile", params={"topology": NAME,
                                                       "name": "../x.log"}).status_code == 422
