"""Topologies on a real three-node Slurm cluster (tests/slurm/): `heron submit
slurm` runs each container as its own job on whichever nodes Slurm picks, over TCP with
CurveZMQ between network namespaces, and the scheduler keeps them running when a node
dies. What ran where is read from the processes' network namespaces and from squeue, not
from what the engine says about itself.

The topology (tests/cluster/projects/durable) has a durable source and an idempotent
sink backed by the shared directory, as a production at-least-once topology has a queue
and a store: so "every id acked at least once" and "de-duplicated counts equal the
input's" can be checked after containers moved between nodes.
"""

from __future__ import annotations

import collections
import json
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from tests.cluster.conftest import running_slurm_cluster, zookeeper_on
from tests.e2e.heron.helpers import complete_text
from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(300)

PROJECT = Path(__file__).resolve().parent / "projects" / "durable"
NAME = "durable_wordcount"
sys.path.insert(0, str(PROJECT / "src"))
try:
    from durable import word_of  # noqa: E402
finally:
    sys.path.remove(str(PROJECT / "src"))


@pytest.fixture
def slurm_cluster():
    """A fresh three-node cluster for each test (about half a second to build): a node a
    test killed and brought back stays busy finishing its lost jobs' cleanup for a while,
    which would make the next test's scheduling depend on the one before."""
    with running_slurm_cluster() as cluster:
        yield cluster


@pytest.fixture
def slurm_zookeeper(slurm_cluster):
    """ZooKeeper on this test's cluster's bridge address."""
    with zookeeper_on(slurm_cluster.host_address) as server:
        yield server


@pytest.fixture(autouse=True)
def forget_projects(isolated_imports):
    """`heron submit` runs in this process and imports the project's modules: forget them."""
    yield


@pytest.fixture(autouse=True)
def reap_schedulers():
    """``heron submit`` runs in this process, so each detached scheduler service is our
    child: wait for the ones that exited after ``heron kill`` (and end any still running,
    which the orphan check then reports)."""
    before = {p.pid for p in psutil.Process().children()}
    yield
    for child in psutil.Process().children():
        if child.pid in before:
            continue
        try:
            child.wait(30)
        except psutil.TimeoutExpired:
            child.kill()
            child.wait(5)
        except psutil.Error:
            pass


def wait_until(predicate, timeout: float, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


class SlurmTopology:
    """One submitted topology on the cluster, from the CLI, with its own heron home,
    ZooKeeper root and store directory. ``project``/``name``: another project's topology
    (tests/cluster/projects/), which reads the ``e2e.*`` options it knows."""

    def __init__(self, cluster, zookeeper, tmp: Path, n: int, *, rate: int = 400,
                 project: Path = PROJECT, name: str = NAME) -> None:
        self.cluster, self.n = cluster, n
        self.project, self.name = project, name
        self.home = tmp / "home"
        self.store = cluster.shared_dir / f"store-{uuid.uuid4().hex[:8]}"
        self.store.mkdir(mode=0o700)
        #: where effectively-once topologies checkpoint (stateful.yaml): every node mounts it
        self.checkpoints = cluster.shared_dir / f"checkpoints-{uuid.uuid4().hex[:8]}"
        conf = self.home / "conf" / "slurm"
        conf.mkdir(parents=True)
        digest = tmp / "zk-auth"
        digest.write_text("heron:cluster-secret\n")
        digest.chmod(0o600)
        (conf / "scheduler.yaml").write_text(
            "heron.class.scheduler: slurm\n"
            f"heron.slurm.conf: {cluster.conf_path}\n"
            "heron.slurm.poll.secs: 1\n"
            f"heron.slurm.work.root: {cluster.local_dir}\n"
            f"heron.slurm.python: {sys.executable}\n")
        (conf / "statemgr.yaml").write_text(
            "heron.class.state.manager: zookeeper\n"
            f"heron.statemgr.connection.string: {zookeeper.hosts}\n"
            f"heron.statemgr.root.path: /heron-slurm-{uuid.uuid4().hex[:8]}\n"
            f"heron.statemgr.zookeeper.auth.file: {digest}\n")
        (conf / "uploader.yaml").write_text(
            "heron.class.uploader: localfs\n"
            f"heron.uploader.localfs.file.system.directory: {cluster.shared_dir / 'packages'}\n")
        (conf / "stateful.yaml").write_text(
            "heron.statefulstorage.classname: localfs\n"
            f"heron.statefulstorage.localfs.root.path: {self.checkpoints}\n")
        self.options = ["-o", f"e2e.store={self.store}", "-o", f"e2e.n={n}",
                        "-o", f"e2e.rate={rate}",
                        "-o", "heron.resources.instance.ram=134217728",
                        "-o", "heron.resources.instance.cpu=0.5",
                        "-o", "topology.container.padding.ram=268435456",
                        "-o", "topology.container.padding.cpu=1.0",
                        "-o", "heron.executor.restart.backoff.initial.ms=200"]

    def heron(self, *args: str):
        return heron(*args, "--home", str(self.home), *(
            ["--cluster", "slurm"] if args[0] not in ("submit",) else []))

    def submit(self, workers: int = 3) -> None:
        result = heron("submit", "slurm", str(self.project), "-n", self.name, "-w", str(workers),
                       "--home", str(self.home), *self.options)
        assert result.exit_code == 0, result.output

    @property
    def working_dir(self) -> Path:
        return self.home / "topologies" / self.name

    def status(self) -> dict:
        try:
            return json.loads((self.working_dir / "scheduler-status.json").read_text())
        except (OSError, ValueError):
            return {}

    def acked(self) -> set[int]:
        path = self.store / "acked.log"
        return {int(x) for x in complete_text(path).split()} if path.exists() else set()

    def records(self) -> dict[int, str]:
        out: dict[int, str] = {}
        for path in self.store.glob("records-*.log"):
            for line in complete_text(path).splitlines():
                i, word = line.split()
                out[int(i)] = word
        return out

    def engine_pids(self) -> list[int]:
        """Live engine processes of this topology, on any node (by their command line)."""
        found = []
        for proc in psutil.process_iter(["cmdline"]):
            try:
                cmd = " ".join(proc.info["cmdline"] or ())
                if "engine." in cmd and self.name in cmd and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc.pid)
            except psutil.Error:
                continue
        return found

    def nodes_running_engine(self) -> dict[str, int]:
        counts: collections.Counter[str] = collections.Counter()
        for pid in self.engine_pids():
            node = self.cluster.node_of_pid(pid)
            if node is not None:
                counts[node] += 1
        return dict(counts)

    def squeue(self) -> list[tuple[str, str, str]]:
        out = self.cluster.run("squeue", "--noheader", "--format=%i|%j|%T|%N").stdout
        return [tuple(line.split("|")[:4]) for line in out.splitlines()
                if f"heron-{self.name}-" in line]

    def check_counts(self) -> None:
        assert self.acked() == set(range(self.n)), \
            f"ids never acked: {sorted(set(range(self.n)) - self.acked())[:20]}"
        records = self.records()
        assert set(records) == set(range(self.n))
        assert collections.Counter(records.values()) == collections.Counter(
            word_of(i) for i in range(self.n))

    def kill(self) -> None:
        result = self.heron("kill", self.name, "--wait", "0")
        assert result.exit_code == 0, result.output


def test_word_count_at_least_once_across_three_nodes(slurm_cluster, slurm_zookeeper, tmp_path):
    topology = SlurmTopology(slurm_cluster, slurm_zookeeper, tmp_path, n=1500)
    topology.submit(workers=3)
    try:
        jobs = wait_until(lambda: [j for j in topology.squeue() if j[2] == "RUNNING"], 60)
        assert wait_until(lambda: len([j for j in topology.squeue() if j[2] == "RUNNING"]) == 4,
                          60), topology.squeue()
        nodes = wait_until(lambda: (lambda n: n if len(n) >= 2 else None)(
            topology.nodes_running_engine()), 60)
        assert nodes and len(nodes) >= 2, (nodes, topology.squeue())
        assert {j[3] for j in topology.squeue()} <= set(slurm_cluster.node_names)
        assert wait_until(lambda: len(topology.acked()) == topology.n, 120), \
            (len(topology.acked()), topology.status())
        topology.check_counts()
        listed = topology.heron("list")
        assert "slurm jobs: container 0 job" in listed.output, listed.output
        assert jobs
        check_logs_come_from_the_nodes(topology, slurm_cluster)
    finally:
        topology.kill()
    assert wait_until(lambda: not topology.squeue(), 30), topology.squeue()
    assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()


def check_logs_come_from_the_nodes(topology: SlurmTopology, cluster) -> None:
    """`heron logs` lists and reads each container's files through its shell: they exist
    only in the nodes' private /tmp (another mount namespace), never on this machine."""
    assert not list(Path("/tmp").glob(f"heron-*/{NAME}-*")), "container files on the host"
    listing = topology.heron("logs", NAME)
    assert listing.exit_code == 0, listing.output
    where = {line.split()[0]: line.rsplit("(", 1)[-1].rstrip(")") for line in
             listing.output.splitlines() if line.endswith(")")}
    assert where.get("heron-tmanager.log", "").startswith("container 0 on node"), listing.output
    sinks = {name: w for name, w in where.items() if name.startswith("container_")
             and "_sink_" in name}
    assert len(sinks) == 2, listing.output
    for name, place in sinks.items():
        container, node = place.split()[1], place.split()[-1]
        assert name.startswith(f"container_{container}_") and node in cluster.node_names
        assert f"executor-{container}.log" in where  # the job's own log, beside them
    tail = topology.heron("logs", NAME, "sink", "-n", "3")
    assert tail.exit_code == 0, tail.output
    assert tail.output.count("==> container_") == 2, tail.output


def test_a_request_slurm_can_never_satisfy_exits_2_and_leaves_nothing_queued(
        slurm_cluster, slurm_zookeeper, tmp_path):
    topology = SlurmTopology(slurm_cluster, slurm_zookeeper, tmp_path, n=10)
    # 64 GiB per instance: no node of the cluster (2 GiB each) can ever run a container
    topology.options += ["-o", "heron.resources.instance.ram=68719476736"]
    began = time.monotonic()
    result = heron("submit", "slurm", str(PROJECT), "-n", NAME, "-w", "2",
                   "--home", str(topology.home), *topology.options)
    assert result.exit_code == 2, result.output
    assert "Requested node configuration is not available" in result.output
    assert time.monotonic() - began < 60
    assert topology.squeue() == []
    assert NAME not in topology.heron("list").output
    assert not list((slurm_cluster.shared_dir / "packages").glob(f"{NAME}-*"))


def state_of(topology: SlurmTopology):
    """The topology's ZooKeeper state, as its processes see it (with the digest)."""
    from engine.common.cluster.config import load_cluster
    from engine.submitter.upload import cluster_state_spec

    return cluster_state_spec(load_cluster(topology.home, "slurm")).open()


def container_of(topology: SlurmTopology, component: str) -> int:
    with state_of(topology) as state:
        packing = state.get("packingplans", topology.name)
    for container in packing.container_plans:
        if any(i.component_name == component for i in container.instance_plans):
            return container.id
    raise AssertionError(f"no container holds {component}")


def job_of(topology: SlurmTopology, container: int) -> dict | None:
    for job in topology.status().get("jobs", []):
        if job["container"] == container:
            return job
    return None


def container_nodes(topology: SlurmTopology, container: int) -> set[str]:
    """The nodes whose namespaces hold this container's executor (by its command line)."""
    nodes = set()
    for proc in psutil.process_iter(["cmdline"]):
        try:
            cmd = proc.info["cmdline"] or []
            if ("engine.executor" in cmd and "--container" in cmd
                    and cmd[cmd.index("--container") + 1] == str(container)
                    and any(topology.name in part for part in cmd)):
                node = topology.cluster.node_of_pid(proc.pid)
                if node:
                    nodes.add(node)
        except (psutil.Error, IndexError):
            continue
    return nodes


def tracker_scheduler_status(topology: SlurmTopology) -> dict:
    """The tracker's /topologies/scheduler answer for the topology (its REST API, in
    process, over the cluster's ZooKeeper)."""
    from fastapi.testclient import TestClient

    from engine.common.cluster.config import load_cluster
    from engine.submitter.upload import cluster_state_spec
    from tests.engine.tracker.conftest import TOKEN, tracker_app

    spec = cluster_state_spec(load_cluster(topology.home, "slurm"))
    with TestClient(tracker_app(spec, home=topology.home),
                    headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        answer = http.get("/topologies/scheduler", params={"topology": NAME})
    assert answer.status_code == 200, answer.text
    return answer.json()


def bring_back(cluster, node: str) -> None:
    """Return a killed or partitioned node to service, as the test that broke it must."""
    cluster.return_to_service(node)


@pytest.mark.parametrize("victim", ["sink", "tmanager"])
def test_the_containers_of_a_dead_node_come_back_on_the_others(slurm_cluster, slurm_zookeeper,
                                                                tmp_path, victim):
    topology = SlurmTopology(slurm_cluster, slurm_zookeeper, tmp_path, n=2400, rate=120)
    topology.submit(workers=3)
    container = 0 if victim == "tmanager" else container_of(topology, "sink")
    node = None
    try:
        assert wait_until(lambda: len(topology.acked()) >= 200, 90), topology.status()
        job = job_of(topology, container)
        assert job and job["state"] == "RUNNING", topology.status()
        node = job["node"]
        assert container_nodes(topology, container) == {node}
        killed_at = time.monotonic()
        slurm_cluster.kill_node(node)
        moved = wait_until(lambda: (lambda j: j if j and j["state"] == "RUNNING"
                                    and j["node"] not in ("", node) else None)(
            job_of(topology, container)), 150)
        assert moved, (topology.status(), slurm_cluster.run("sinfo", "-N", "-l").stdout,
                       (slurm_cluster.log_dir / "slurmctld.log").read_text()[-4000:])
        recovered_in = time.monotonic() - killed_at
        assert wait_until(lambda: container_nodes(topology, container) - {node}, 60)
        assert wait_until(lambda: len(topology.acked()) == topology.n, 240), \
            (len(topology.acked()), topology.status())
        topology.check_counts()
        recoveries = wait_until(lambda: [r for r in topology.status()["recoveries"]
                                         if r["container"] == container], 30)
        assert recoveries, topology.status()
        # timed from the container's last report (about when the node died), not from
        # Slurm noticing it seconds later, and to its replacement reporting again
        (recovery,) = recoveries
        assert recovery["measured_from"] == "last report", recovery
        assert recovery["seconds"] >= recovered_in - 4.0, (recovery, recovered_in)
        assert 0 < recovery["detected_after"] < recovery["running_after"] <= recovery["seconds"]
        listed = " ".join(topology.heron("list").output.split())  # the table wraps lines
        assert f"recovered container {container} in" in listed, listed
        assert "timed from its last report; noticed after" in listed, listed
        tracked = tracker_scheduler_status(topology)
        assert any(r["container"] == container and r["seconds"] > 0
                   for r in tracked["recoveries"]), tracked
        assert {j["node"] for j in tracked["jobs"]} - {""} <= set(slurm_cluster.node_names)
        print(f"\n{victim} container {container} on {node}: running again elsewhere "
              f"{recovered_in:.1f} s after the node died; recoveries {recoveries}")
    finally:
        topology.kill()
        if node is not None:
            bring_back(slurm_cluster, node)
    assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()


def executor_pids(topology: SlurmTopology, container: int, node: str) -> set[int]:
    pids = set()
    for pid in topology.cluster.pids_in(node):
        try:
            cmd = psutil.Process(pid).cmdline()
        except psutil.Error:
            continue
        if ("engine.executor" in cmd and "--container" in cmd
                and cmd[cmd.index("--container") + 1] == str(container)):
            pids.add(pid)
    return pids


def test_a_partitioned_node_s_containers_are_replaced_and_never_rejoin(
        slurm_cluster, slurm_zookeeper, tmp_path):
    topology = SlurmTopology(slurm_cluster, slurm_zookeeper, tmp_path, n=2400, rate=120)
    topology.submit(workers=3)
    node = None
    try:
        assert wait_until(lambda: len(topology.acked()) >= 200, 90), topology.status()
        jobs = {j["container"]: j for j in topology.status()["jobs"]}
        tm_node = jobs[0]["node"]
        with state_of(topology) as state:
            packing = state.get("packingplans", NAME)
        sinks = [c.id for c in packing.container_plans
                 if any(i.component_name == "sink" for i in c.instance_plans)]
        victim = next(c for c in sinks if jobs[c]["node"] != tm_node)
        node = jobs[victim]["node"]
        old = executor_pids(topology, victim, node)
        assert old, f"no executor of container {victim} on {node}"
        slurm_cluster.partition(node)
        moved = wait_until(lambda: (lambda j: j if j and j["state"] == "RUNNING"
                                    and j["node"] not in ("", node) else None)(
            job_of(topology, victim)), 150)
        assert moved, topology.status()
        # the link comes back. Two things stop the old copy, whichever comes first: Slurm
        # delivers the cancellation it could not deliver before, and the Topology Master
        # refuses the superseded Stream Manager (its executor then stops the container).
        # Either way it must never rejoin: it does not register again.
        slurm_cluster.heal(node)
        gone = wait_until(lambda: not any(psutil.pid_exists(p) and
                                          psutil.Process(p).status() != psutil.STATUS_ZOMBIE
                                          for p in old), 90)
        log = slurm_cluster.node_path(node, slurm_cluster.local_dir)
        text = "\n".join(
            p.read_text(errors="replace") for p in log.rglob(f"container-{victim}*.log")
        )
        text += "\n".join(p.read_text(errors="replace") for p in log.rglob(f"stmgr-{victim}.log"))
        assert gone, f"the old container {victim} still runs on {node}: {text[-2000:]}"
        # it registered once, before the partition, and never again: moved as soon as it
        # fell silent, it may be stopped (Slurm's cancellation, delivered once the link
        # is back) before its Stream Manager even noticed the connection was lost
        cut_off = text.rfind("connection lost")
        if cut_off > 0:
            after = text[cut_off:]
            assert "registered with the topology master" not in after, after[-2000:]
        else:
            assert text.count("registered with the topology master") == 1, text[-2000:]
        assert wait_until(lambda: len(topology.acked()) == topology.n, 240), \
            (len(topology.acked()), topology.status())
        topology.check_counts()
        with state_of(topology) as state:
            pplan = state.get("pplans", NAME)
        assert all(not s.data_endpoint.startswith(f"tcp://{slurm_cluster.node_address(node)}:")
                   for s in pplan.stmgrs if s.id == f"stmgr-{victim}")
    finally:
        topology.kill()
        if node is not None:
            bring_back(slurm_cluster, node)
    assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()


_OUTSIDER = """
import sys, time, zmq
ctx = zmq.Context()
sock = ctx.socket(zmq.DEALER)
sock.setsockopt(zmq.LINGER, 0)
sock.connect(sys.argv[1])
for _ in range(5):
    try:
        sock.send_multipart([b"heron.proto.stmgr.TupleStreamMessage", b"\\x08\\x01"], zmq.NOBLOCK)
    except zmq.Again:
        pass
    time.sleep(0.3)
sock.close()
ctx.term()
"""


def test_update_adds_and_removes_a_job_and_outsiders_on_other_nodes_are_refused(
        slurm_cluster, slurm_zookeeper, tmp_path):
    topology = SlurmTopology(slurm_cluster, slurm_zookeeper, tmp_path, n=1500, rate=100)
    topology.submit(workers=2)
    try:
        assert wait_until(lambda: len([j for j in topology.squeue() if j[2] == "RUNNING"]) == 3,
                          60), topology.squeue()
        assert wait_until(lambda: len(topology.acked()) >= 100, 90)
        # an outsider on another node (no keys) tries a Stream Manager's data socket
        with state_of(topology) as state:
            pplan = state.get("pplans", NAME)
        target = pplan.stmgrs[0]
        host = target.data_endpoint[len("tcp://"):].rsplit(":", 1)[0]
        other = next(n for n in slurm_cluster.node_names if slurm_cluster.node_address(n) != host)
        ran = slurm_cluster.node_run(other, sys.executable, "-c", _OUTSIDER, target.data_endpoint)
        assert ran.returncode == 0, ran.stderr

        def refused() -> int:
            out = topology.heron("metrics", NAME, "--json").output
            values = json.loads(out).get(f"__stmgr__/{target.id}", {})
            return int(values.get("__connections-refused", 0))
        assert wait_until(refused, 30), topology.heron("metrics", NAME, "--json").output

        grown = topology.heron("update", NAME, "--component-parallelism", "sink:3",
                               "--container-number", "3")
        assert grown.exit_code == 0, grown.output
        assert wait_until(lambda: len([j for j in topology.squeue() if j[2] == "RUNNING"]) == 4,
                          60), topology.squeue()
        assert wait_until(lambda: container_nodes(topology, 3), 60)
        shrunk = topology.heron("update", NAME, "--component-parallelism", "sink:2",
                                "--container-number", "2")
        assert shrunk.exit_code == 0, shrunk.output
        assert wait_until(lambda: len(topology.squeue()) == 3, 60), topology.squeue()
        assert wait_until(lambda: not container_nodes(topology, 3), 60)
        assert wait_until(lambda: len(topology.acked()) == topology.n, 240), \
            (len(topology.acked()), topology.status())
        topology.check_counts()
    finally:
        topology.kill()
    assert wait_until(lambda: not topology.squeue(), 30), topology.squeue()
    assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()
