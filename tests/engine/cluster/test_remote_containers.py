"""Containers started the way a cluster manager starts them, on this machine.

A topology is submitted to a cluster description (ZooKeeper with a digest, a localfs
uploader) and each container is then started by ``python -m engine.executor.remote``
alone, as a Slurm job or a Kubernetes pod runs it: from the package URL, its SHA-256 and
the ZooKeeper address, with no file of the submitter's working directory. Word count
runs to the end over TCP between the containers, every word counted, and each container
kept its working directory, keys and environment in its own node-local root. A package
whose SHA-256 is not the one given is refused before anything is unpacked.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from engine.common.cluster.config import ClusterRef, load_cluster
from engine.common.launch import LaunchSpec, Submission
from engine.common.network import request
from engine.common.network.sockets import RequestTimeout
from engine.common.security.guard import SocketSecurity
from engine.common.security.keys import keys_from_state
from engine.common.submission import load_topology
from engine.messages import tmanager_pb2
from engine.submitter.upload import cluster_state_spec, submit_to_cluster

REPO = Path(__file__).resolve().parents[3]
WORDCOUNT = REPO / "examples" / "wordcount"
pytestmark = pytest.mark.timeout(240)


def cluster_home(tmp_path: Path, zk_hosts: str) -> Path:
    home = tmp_path / "home"
    conf = home / "conf" / "lab"
    conf.mkdir(parents=True)
    digest = tmp_path / "zk-auth"
    digest.write_text("heron:s3cret\n")
    digest.chmod(0o600)
    (conf / "scheduler.yaml").write_text("heron.class.scheduler: slurm\n")
    (conf / "statemgr.yaml").write_text(
        f"heron.class.state.manager: zookeeper\nheron.statemgr.connection.string: {zk_hosts}\n"
        f"heron.statemgr.root.path: /heron-remote-{uuid.uuid4().hex[:8]}\n"
        f"heron.statemgr.zookeeper.auth.file: {digest}\n")
    (conf / "uploader.yaml").write_text(
        f"heron.class.uploader: localfs\n"
        f"heron.uploader.localfs.file.system.directory: {tmp_path / 'shared'}\n")
    return home


def bootstrap(spec: LaunchSpec, container: int, node_root: Path, *, sha256: str | None = None,
              log: Path) -> subprocess.Popen:
    argv = [sys.executable, "-m", "engine.executor.remote", "--topology", spec.topology_name,
            "--topology-id", spec.topology_id, "--container", str(container),
            "--package", spec.package_url, "--sha256", sha256 or spec.package_sha256,
            "--zk", spec.state.zk_hosts, "--zk-root", spec.state.zk_root,
            "--zk-auth-file", str(spec.state.zk_auth_file), "--bind-host", "127.0.0.1",
            "--incarnation", "7", "--work-root", str(node_root)]
    with open(log, "ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def counted(state, name: str, security) -> tuple[int, int]:
    location = state.get("tmanagers", name)
    if location is None:
        return 0, 0
    try:
        response = request(location.controller_endpoint, tmanager_pb2.MetricRequest(),
                           timeout=2.0, security=security)
    except RequestTimeout:
        return 0, 0
    emitted = executed = 0
    for task in response.metric:
        for metric in task.metric:
            if metric.name == "word_spout/__emit-count":
                emitted += int(metric.value)
            elif metric.name == "count_bolt/__execute-count":
                executed += int(metric.value)
    return emitted, executed


def test_containers_started_from_the_package_alone_run_word_count(tmp_path, zookeeper,
                                                                  isolated_imports):
    n = 3000
    home = cluster_home(tmp_path, zookeeper.hosts)
    cluster = load_cluster(home, "lab")
    loaded = load_topology(WORDCOUNT, workers=2, cli_options={
        "wordcount.max_words": n, "wordcount.seed": 3,
        "heron.executor.restart.backoff.initial.ms": 100})
    working_dir = home / "topologies" / "wordcount"
    state_spec = cluster_state_spec(cluster, working_dir)
    node_root = tmp_path / "node"
    procs: list[subprocess.Popen] = []
    with state_spec.open() as state:
        submitted = submit_to_cluster(
            cluster, ClusterRef.parse("lab"), loaded,
            Submission(project=str(WORDCOUNT), name="wordcount", workers=2,
                       options={"wordcount.max_words": n, "wordcount.seed": 3}),
            working_dir, state, state_spec)
        spec = submitted.spec
        try:
            assert spec.package_url.startswith("file://") and (tmp_path / "shared").is_dir()
            # a package whose hash is not the submitted one is refused, nothing unpacked
            bad = bootstrap(spec, 1, tmp_path / "bad-node", sha256="0" * 64,
                            log=tmp_path / "bad.log")
            assert bad.wait(60) == 2
            assert "SHA-256 mismatch" in (tmp_path / "bad.log").read_text()
            assert not list((tmp_path / "bad-node").rglob("topologies"))

            for c in range(3):
                procs.append(bootstrap(spec, c, node_root, log=tmp_path / f"c{c}.log"))
            security = SocketSecurity(keys_from_state(state, "wordcount"))
            deadline = time.monotonic() + 180
            figures = (0, 0)
            while time.monotonic() < deadline and figures != (n, n):
                figures = counted(state, "wordcount", security)
                assert all(p.poll() is None for p in procs), [
                    (tmp_path / f"c{c}.log").read_text()[-2000:] for c in range(3)]
                time.sleep(0.5)
            assert figures == (n, n), figures

            # each container lives in its node-local root, owner-only, with its own keys
            base = node_root / f"heron-{os.getuid()}" / spec.topology_id
            for c in range(3):
                launch = LaunchSpec.load(base / f"container-{c}")
                assert launch.bind_host == "127.0.0.1" and launch.incarnation == 7
                assert Path(launch.submission.project) == base / f"container-{c}" / "project"
                assert (base / f"container-{c}" / "secrets" / "topology.keys").stat().st_mode \
                    & 0o077 == 0
                assert "venv-" in launch.python  # virtualenvs/wordcount.txt, built on the node
            pplan = state.get("pplans", "wordcount")
            assert all(s.data_endpoint.startswith("tcp://127.0.0.1:") for s in pplan.stmgrs)
        finally:
            for p in procs:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(10)
            state.clean("wordcount")
