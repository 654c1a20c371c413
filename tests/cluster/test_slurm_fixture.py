"""The Slurm test cluster (tests/slurm/) is real and usable: three nodes, each a
network, hostname and mount namespace of its own; jobs land where they are sent, reach
the host on the bridge, write privately and read the shared directory; scancel, node
death and network partitions behave as on a real cluster; and nothing is left behind.

Placement and isolation are checked with the kernel's view (a pid's network namespace,
files seen through a node's mount namespace), never with what Slurm reports. Timings are
printed (``-s`` shows them) and bounded generously, never asserted tightly: the machine
has two cores shared with other work.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.slurm import SlurmCluster, SlurmClusterError, remove_stale_runs, run_leftovers
from tests.unavailable import unavailable
from tests.zookeeper_server import four_letter_word

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


class Listener:
    """A TCP server on the bridge address that records (peer address, first line)."""

    def __init__(self, host: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.host, self.port = self.sock.getsockname()
        self.seen: list[tuple[str, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, (peer, _) = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    data = conn.recv(1024).decode(errors="replace").strip()
                    # recorded before answering: whoever got the answer is in seen
                    self.seen.append((peer, data))
                    conn.sendall(b"ok\n")
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


class NodeListener:
    """A TCP server inside a node's network namespace (a process started with
    ``node_command``), answering "ok" to every connection."""

    CODE = ("import socket, sys\n"
            "s = socket.socket(); s.bind(('0.0.0.0', 0)); s.listen(16)\n"
            "print(s.getsockname()[1], flush=True)\n"
            "while True:\n"
            "    c, _ = s.accept(); c.recv(64); c.sendall(b'ok'); c.close()\n")

    def __init__(self, cluster: SlurmCluster, node: str) -> None:
        self.proc = subprocess.Popen(cluster.node_command(node, sys.executable, "-c",
                                                          self.CODE),
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self.proc.stdout.close()


@pytest.fixture
def listener(slurm_cluster):
    server = Listener(slurm_cluster.host_address)
    yield server
    server.close()


def probe_script(cluster: SlurmCluster, listener: Listener, tag: str) -> str:
    """A job that reports where it runs (pid, hostname), writes a marker in the node's
    private tmpfs, reads the shared directory, says hello to ``listener`` and then
    sleeps until cancelled. Its report lands in shared/probe-<tag>.json."""
    return textwrap.dedent(f"""\
        #!/usr/bin/env python3
        import json, os, socket, time
        shared, local, tag = {str(cluster.shared_dir)!r}, {str(cluster.local_dir)!r}, {tag!r}
        job = os.environ["SLURM_JOB_ID"]
        report = {{"pid": os.getpid(), "hostname": socket.gethostname(), "job": job,
                   "slurmd_nodename": os.environ.get("SLURMD_NODENAME")}}
        private = os.path.join(local, "job-" + job)
        os.makedirs(private)
        with open(os.path.join(private, "marker"), "w") as f:
            f.write(report["hostname"])
        with open(os.path.join(shared, "input.txt")) as f:
            report["shared_input"] = f.read()
        with socket.create_connection(({listener.host!r}, {listener.port}), timeout=10) as s:
            s.sendall((tag + " " + report["hostname"] + "\\n").encode())
            report["host_answer"] = s.recv(16).decode().strip()
        tmp = os.path.join(shared, "probe-" + tag + ".tmp")
        with open(tmp, "w") as f:
            json.dump(report, f)
        os.rename(tmp, os.path.join(shared, "probe-" + tag + ".json"))
        time.sleep(600)
        """)


def submit_probe(cluster: SlurmCluster, listener: Listener, node: str, tag: str,
                 *extra: str) -> int:
    return cluster.sbatch(
        f"--nodelist={node}", "--ntasks=1", f"--job-name=probe-{tag}",
        f"--chdir={cluster.local_dir}", f"--output={cluster.shared_dir}/job-%j.out",
        *extra, script=probe_script(cluster, listener, tag))


def wait_report(cluster: SlurmCluster, tag: str, job: int, timeout: float = 30.0) -> dict:
    path = cluster.shared_dir / f"probe-{tag}.json"
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            out = cluster.shared_dir / f"job-{job}.out"
            raise AssertionError(
                f"probe {tag} (job {job}) did not report within {timeout:g}s; "
                f"job: {cluster.job(job)}; output: "
                f"{out.read_text() if out.exists() else '(none)'}")
        time.sleep(0.1)
    return json.loads(path.read_text())


def wait_until(predicate, timeout: float, interval: float = 0.05) -> float:
    """Seconds until ``predicate()`` held; AssertionError after ``timeout``."""
    began = time.monotonic()
    while not predicate():
        if time.monotonic() - began > timeout:
            raise AssertionError(f"not true within {timeout:g}s")
        time.sleep(interval)
    return time.monotonic() - began


def cancel(cluster: SlurmCluster, *jobs: int) -> None:
    if jobs:
        cluster.run("scancel", *map(str, jobs), check=False)


def connect_from(cluster: SlurmCluster, node: str, host: str, port: int,
                 timeout: float = 2.0) -> subprocess.CompletedProcess:
    """Try a TCP connection from inside ``node``'s network namespace."""
    code = (f"import socket; s = socket.create_connection(({host!r}, {port}), "
            f"timeout={timeout}); s.sendall(b'from {node}\\n'); s.recv(16)")
    return cluster.node_run(node, sys.executable, "-c", code, timeout=timeout + 20)


# ------------------------------------------------------------------------- tests


@pytest.mark.timeout(90)
def test_three_nodes_are_idle_each_in_its_own_namespaces(slurm_cluster):
    cluster = slurm_cluster
    print(f"\ncluster built in {cluster.start_seconds:.2f}s")
    assert cluster.node_names == ["node1", "node2", "node3"]
    states = {name: info["State"] for name, info in cluster.nodes_info().items()}
    assert states == {"node1": "IDLE", "node2": "IDLE", "node3": "IDLE"}
    sinfo = cluster.run("sinfo", "-h", "-N", "-o", "%N %t").stdout.split()
    assert sinfo == ["node1", "idle", "node2", "idle", "node3", "idle"]
    host_net = os.stat("/proc/self/ns/net").st_ino
    addresses = set()
    for name in cluster.node_names:
        slurmd = cluster.slurmd_pid(name)
        assert slurmd in cluster.pids_in(name)
        assert cluster.node_of_pid(slurmd) == name
        assert os.stat(f"/proc/{slurmd}/ns/net").st_ino != host_net
        for ns in ("uts", "mnt"):
            assert os.stat(f"/proc/{slurmd}/ns/{ns}").st_ino != \
                os.stat(f"/proc/self/ns/{ns}").st_ino
        assert cluster.node_run(name, "hostname").stdout.strip() == name
        addresses.add(cluster.node_address(name))
        # every node resolves the others and the controller by name, without DNS
        hosts = cluster.node_run(name, "getent", "hosts", "node1", "node2", "node3",
                                 "hctl").stdout.split()
        assert cluster.host_address in hosts and cluster.node_address("node3") in hosts
    assert len(addresses) == 3 and cluster.host_address not in addresses


@pytest.mark.timeout(60)
def test_nodes_see_their_own_tmp_and_no_network_beyond_the_host(slurm_cluster, tmp_path):
    cluster = slurm_cluster
    host_file = Path("/tmp") / f"host-only-{os.getpid()}-{time.monotonic_ns()}"
    host_file.write_text("host")
    try:
        for name in cluster.node_names:
            assert cluster.node_run(name, "test", "-e", str(host_file)).returncode == 1
            mounts = cluster.node_run(name, "cat", "/proc/self/mounts").stdout
            assert f"heron-{name} /tmp tmpfs" in mounts
            assert " /dev/shm tmpfs" in mounts
        # the shared directory is the same everywhere
        (cluster.shared_dir / "hello").write_text("shared")
        assert cluster.node_run("node2", "cat", str(cluster.shared_dir / "hello")
                                ).stdout == "shared"
    finally:
        host_file.unlink()
    # Nothing beyond the host: refused at once (never forwarded, never hanging).
    began = time.monotonic()
    outside = connect_from(cluster, "node1", "203.0.113.7", 80, timeout=10)
    assert outside.returncode != 0
    assert "No route to host" in outside.stderr
    assert time.monotonic() - began < 8


@pytest.mark.timeout(120)
def test_jobs_land_on_their_nodes_reach_the_host_and_keep_files_private(
        slurm_cluster, listener):
    cluster = slurm_cluster
    (cluster.shared_dir / "input.txt").write_text("uploaded package\n")
    jobs = {}
    try:
        submitted = time.monotonic()
        for name in cluster.node_names:
            jobs[name] = submit_probe(cluster, listener, name, f"place-{name}")
        reports = {name: wait_report(cluster, f"place-{name}", job)
                   for name, job in jobs.items()}
        print(f"\nthree jobs reported from their nodes {time.monotonic() - submitted:.2f}s "
              "after the first sbatch")
        for name, report in reports.items():
            pid = report["pid"]
            # where the process really is: its network namespace, not Slurm's word
            assert cluster.node_of_pid(pid) == name
            assert pid in cluster.pids_in(name)
            for other in cluster.node_names:
                if other != name:
                    assert pid not in cluster.pids_in(other)
            assert report["hostname"] == name
            assert report["slurmd_nodename"] == name
            assert report["shared_input"] == "uploaded package\n"
            assert report["host_answer"] == "ok"
            # private tmpfs: the node sees its marker; the host and other nodes do not
            marker = cluster.local_dir / f"job-{report['job']}" / "marker"
            assert cluster.node_path(name, marker).read_text() == name
            assert not marker.exists()
            for other in cluster.node_names:
                if other != name:
                    assert not cluster.node_path(other, marker).exists()
        # the listener on the bridge address saw each node from its own address
        seen = {data.split()[0]: peer for peer, data in listener.seen}
        assert seen == {f"place-{name}": cluster.node_address(name)
                        for name in cluster.node_names}
    finally:
        cancel(cluster, *jobs.values())
    for name in cluster.node_names:
        wait_until(lambda name=name: cluster.pids_in(name) == {cluster.slurmd_pid(name)},
                   timeout=15)


@pytest.mark.timeout(90)
def test_scancel_removes_the_jobs_processes_within_seconds(slurm_cluster, listener):
    cluster = slurm_cluster
    (cluster.shared_dir / "input.txt").write_text("x")
    job = submit_probe(cluster, listener, "node3", "cancel")
    report = wait_report(cluster, "cancel", job)
    job_pids = cluster.pids_in("node3") - {cluster.slurmd_pid("node3")}
    assert report["pid"] in job_pids  # plus slurmstepd
    began = time.monotonic()
    cluster.run("scancel", str(job))
    gone = wait_until(lambda: not (cluster.pids_in("node3") & job_pids), timeout=10)
    print(f"\nscancel: job processes gone in {gone:.2f}s")
    wait_until(lambda: cluster.pids_in("node3") == {cluster.slurmd_pid("node3")},
               timeout=10)
    fields = cluster.wait_job(job, lambda f: f.get("JobState") == "CANCELLED", timeout=10)
    assert fields["NodeList"] == "node3"
    cluster.wait_nodes_state(["node3"], "IDLE", timeout=30)
    assert time.monotonic() - began < 30


@pytest.mark.timeout(180)
def test_a_killed_node_goes_down_its_jobs_fail_or_requeue_and_it_comes_back(
        slurm_cluster, listener):
    cluster = slurm_cluster
    (cluster.shared_dir / "input.txt").write_text("x")
    jobs: list[int] = []
    try:
        failing = submit_probe(cluster, listener, "node2", "die-noreq", "--no-requeue")
        requeued = cluster.sbatch(
            "--nodelist=node2", "--ntasks=1", "--requeue", "--job-name=requeue",
            f"--chdir={cluster.local_dir}", f"--output={cluster.shared_dir}/job-%j.out",
            script="#!/bin/sh\nexec sleep 600\n")
        jobs += [failing, requeued]
        wait_report(cluster, "die-noreq", failing)
        cluster.wait_job(requeued, lambda f: f.get("JobState") == "RUNNING", timeout=30)
        victims = cluster.pids_in("node2")
        assert len(victims) >= 5  # slurmd, two slurmstepd, two jobs

        killed = time.monotonic()
        cluster.kill_node("node2")
        assert cluster.pids_in("node2") == set()
        assert cluster.slurmd_pid("node2") is None
        not_responding = cluster.wait_nodes_state(["node2"], "NOT_RESPONDING",
                                                  timeout=90, exact=False)
        down = cluster.wait_nodes_state(["node2"], "DOWN", timeout=90, exact=False)
        down = time.monotonic() - killed
        print(f"\nnode2 killed: NOT_RESPONDING after {not_responding:.1f}s, "
              f"DOWN after {down:.1f}s")
        fields = cluster.wait_job(failing, lambda f: f.get("JobState") == "NODE_FAIL",
                                  timeout=30)
        assert fields["Requeue"] == "0"
        requeue = cluster.wait_job(requeued, lambda f: int(f.get("Restarts", 0)) >= 1,
                                   timeout=30)
        assert requeue["JobState"] == "PENDING"
        # It was bound to node2 by --nodelist: free it, and Slurm runs it elsewhere
        # once it is eligible again (cred_expire after the requeue).
        cluster.run("scontrol", "update", f"jobid={requeued}", "ReqNodeList=")
        elsewhere = cluster.wait_job(requeued, lambda f: f.get("JobState") == "RUNNING",
                                     timeout=60)
        print(f"--no-requeue job: NODE_FAIL; --requeue job: requeued (Restarts="
              f"{elsewhere['Restarts']}) and running on {elsewhere['NodeList']} "
              f"{time.monotonic() - killed:.1f}s after the kill")
        assert elsewhere["NodeList"] in {"node1", "node3"}
        # RUNNING comes before slurmstepd has started the script: wait for it
        wait_until(lambda: len(cluster.pids_in(elsewhere["NodeList"])) >= 3,  # +stepd, sleep
                   timeout=15)

        began = time.monotonic()
        cluster.restart_node("node2")
        cluster.resume("node2")
        cluster.wait_nodes_state(["node2"], "IDLE", timeout=60)
        print(f"node2 restarted and resumed: IDLE after {time.monotonic() - began:.1f}s")
    finally:
        cancel(cluster, *jobs)
        cluster.return_to_service("node2")  # whatever failed above
    cluster.wait_nodes_state(cluster.node_names, "IDLE", timeout=60)
    # a rebooted node: fresh slurmd, an empty private /tmp
    assert cluster.node_run("node2", "ls", "-A", str(cluster.local_dir)).stdout.split() \
        == []


@pytest.mark.timeout(120)
def test_a_partitioned_node_cannot_reach_the_bridge_until_healed(slurm_cluster, listener,
                                                                request):
    cluster = slurm_cluster
    assert connect_from(cluster, "node1", listener.host, listener.port).returncode == 0
    peer = NodeListener(cluster, "node2")
    request.addfinalizer(peer.close)
    # node to node, across the bridge
    assert connect_from(cluster, "node1", cluster.node_address("node2"), peer.port
                        ).returncode == 0
    slurmd = cluster.slurmd_pid("node1")
    cluster.partition("node1")
    try:
        cut = connect_from(cluster, "node1", listener.host, listener.port, timeout=2)
        assert cut.returncode != 0, "node1 reached the bridge address while partitioned"
        cut = connect_from(cluster, "node1", cluster.node_address("node2"), peer.port,
                           timeout=2)
        assert cut.returncode != 0, "node1 reached node2 while partitioned"
        with pytest.raises(OSError):
            socket.create_connection((cluster.node_address("node1"), 6818), timeout=2)
        # the others are unaffected, and node1's processes go on
        assert connect_from(cluster, "node2", listener.host, listener.port
                            ).returncode == 0
        assert cluster.slurmd_pid("node1") == slurmd
    finally:
        cluster.heal("node1")
    healed = time.monotonic()
    wait_until(lambda: connect_from(cluster, "node1", listener.host, listener.port
                                    ).returncode == 0, timeout=20, interval=0.2)
    print(f"\nnode1 reaches the bridge again {time.monotonic() - healed:.2f}s after heal")
    # A short partition may have made Slurm mark the node not responding (or, past
    # ~15 s, DOWN): resuming is harmless when it is IDLE already.
    cluster.return_to_service("node1")
    cluster.wait_nodes_state(["node1"], "IDLE", timeout=60)


@pytest.mark.timeout(60)
def test_zookeeper_on_the_bridge_address_answers_every_node(slurm_cluster,
                                                            slurm_zookeeper):
    cluster = slurm_cluster
    host, port = slurm_zookeeper.host, slurm_zookeeper.port
    assert host == cluster.host_address
    assert four_letter_word(host, port, "ruok") == "imok"
    code = ("import socket; s = socket.create_connection(({h!r}, {p}), timeout=5); "
            "s.sendall(b'ruok'); s.shutdown(socket.SHUT_WR); print(s.recv(16).decode())")
    for name in cluster.node_names:
        done = cluster.node_run(name, sys.executable, "-c", code.format(h=host, p=port))
        assert done.stdout.strip() == "imok", done.stderr


# ------------------------------------------------------- building and tearing down


@pytest.mark.timeout(120)
def test_stop_leaves_nothing_behind_and_is_idempotent():
    from tests.slurm import missing_requirements
    why = missing_requirements()
    if why:
        unavailable(f"no Slurm cluster on this machine: {why}")
    from tests.conftest import SESSION_SERVICE_PIDS
    cluster = SlurmCluster(nodes=3, service_pids=SESSION_SERVICE_PIDS)
    daemons: set[int] = set()
    try:
        cluster.start()
        daemons = {cluster.slurmd_pid(n) for n in cluster.node_names}
        daemons |= {cluster.slurmctld.pid, cluster.munged.pid}
        assert daemons <= SESSION_SERVICE_PIDS
        job = cluster.sbatch("--nodelist=node2", f"--chdir={cluster.local_dir}",
                             "--output=/dev/null", script="#!/bin/sh\nexec sleep 600\n")
        cluster.wait_job(job, lambda f: f.get("JobState") == "RUNNING", timeout=30)
        wait_until(lambda: len(cluster.pids_in("node2")) >= 3, timeout=10)
        assert cluster.leftovers()  # it is all there
    finally:
        began = time.monotonic()
        cluster.stop()
        stopped = time.monotonic() - began
    print(f"\nstop() with a running job took {stopped:.2f}s")
    assert cluster.leftovers() == []
    assert not SESSION_SERVICE_PIDS & daemons
    cluster.stop()  # twice is fine
    assert cluster.leftovers() == []


@pytest.mark.timeout(60)
def test_a_start_that_fails_half_way_cleans_up():
    from tests.slurm import missing_requirements
    why = missing_requirements()
    if why:
        unavailable(f"no Slurm cluster on this machine: {why}")

    class Broken(SlurmCluster):
        def _start_slurmctld(self) -> None:
            raise SlurmClusterError("controller refused to start (on purpose)")

    cluster = Broken(nodes=2)
    with pytest.raises(SlurmClusterError, match="on purpose"):
        cluster.start()
    assert cluster.leftovers() == []


CRASHING_RUN = """
import sys, time
sys.path.insert(0, {repo!r})
from tests.slurm import SlurmCluster
cluster = SlurmCluster(nodes=2).start()
job = cluster.sbatch("--nodelist=node1", "--output=/dev/null",
                     "--chdir=" + str(cluster.local_dir), script="#!/bin/sh\\nexec sleep 600\\n")
cluster.wait_job(job, lambda f: f.get("JobState") == "RUNNING", timeout=30)
while len(cluster.pids_in("node1")) < 3:
    time.sleep(0.05)
print(cluster.run_id, *(cluster.netns_name(n) for n in cluster.node_names), flush=True)
time.sleep(600)
"""


@pytest.mark.timeout(120)
def test_what_a_killed_test_run_left_is_removed_by_the_next_start():
    from tests.slurm import missing_requirements
    why = missing_requirements()
    if why:
        unavailable(f"no Slurm cluster on this machine: {why}")
    proc = subprocess.Popen([sys.executable, "-c", CRASHING_RUN.format(repo=str(REPO))],
                            stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stdout.readline().split()
        assert line, "the crashing run did not start its cluster"
        run, namespaces = line[0], line[1:]
        idents = []
        for ns in namespaces:
            st = os.stat(f"/run/netns/{ns}")
            idents.append((st.st_dev, st.st_ino))
        # The run dies without cleaning up (as under SIGKILL or a power cut of pytest).
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        left = run_leftovers(run, idents)
        assert any(item.startswith("namespace") for item in left)
        assert any(item.startswith("processes in namespace") for item in left), left
        began = time.monotonic()
        cleaned = remove_stale_runs()
        print(f"\nstale run {run} removed in {time.monotonic() - began:.2f}s")
        assert run in cleaned
        assert run_leftovers(run, idents) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()
