"""The Slurm scheduler's requests against a stand-in for Slurm's commands, and the
scheduler service's answer when a scheduler fails: a restart or an update either
completes or is refused with the cluster manager's message, the old jobs in force; new
jobs are submitted before the ones they replace are cancelled; what a failed request
submitted is cancelled; a restarted service adopts the jobs it finds; every container,
container 0 included, is sized from the documented keys. The job script is run by sh
with a stand-in executor, to see where the digest goes and that it is gone at the end."""

from __future__ import annotations

import os
import subprocess
import threading

import pytest
import zmq

from engine.common.launch import LaunchSpec, StateManagerSpec, Submission
from engine.common.network import decode, encode
from engine.messages import common_pb2, scheduler_pb2
from engine.scheduler.service import SchedulerService
from engine.scheduler.slurm.commands import SlurmError, SlurmUnsatisfiable
from engine.scheduler.slurm.jobscript import UNSAFE_WORK_DIR_EXIT, job_comment
from engine.scheduler.slurm.scheduler import SlurmScheduler
from engine.spi.packing_plan import ContainerPlan, InstancePlan, PackingPlan
from engine.spi.resources import Resource

pytestmark = pytest.mark.timeout(30)

MIB = 1 << 20


class FakeSlurm:
    """sbatch/scancel/squeue as a list of calls; ``fail_sbatch`` makes the n-th next
    sbatch (1: the next) raise it."""

    def __init__(self, topology_id: str) -> None:
        self.topology_id = topology_id
        self.timeout = 1.0
        self.calls: list[tuple] = []
        self.live: dict[str, tuple[str, str, str]] = {}
        self.next_id = 100
        self.fail_sbatch: tuple[int, Exception] | None = None
        self.exit_codes: dict[str, int] = {}

    def sbatch(self, script: str, options: list[str]) -> str:
        if self.fail_sbatch is not None:
            n, exc = self.fail_sbatch
            if n <= 1:
                self.fail_sbatch = None
                raise exc
            self.fail_sbatch = (n - 1, exc)
        self.next_id += 1
        job_id = str(self.next_id)
        comment = next(o for o in options if o.startswith("--comment="))[len("--comment="):]
        self.live[job_id] = ("RUNNING", "node1", comment)
        self.calls.append(("sbatch", job_id, options))
        return job_id

    def scancel(self, job_ids: list[str]) -> None:
        for job_id in job_ids:
            self.live.pop(job_id, None)
        self.calls.append(("scancel", list(job_ids)))

    def topology_jobs(self, prefix: str) -> dict[str, tuple[str, str, str]]:
        return {j: v for j, v in self.live.items() if v[2].startswith(prefix)}

    def job_state(self, job_id: str) -> tuple[str, str]:
        return "GONE", ""

    def exit_code(self, job_id: str) -> int | None:
        return self.exit_codes.get(job_id)

    def node_states(self) -> dict[str, str]:
        return {"node1": "idle"}

    def order(self) -> list[str]:
        return [f"{c[0]} {c[1] if c[0] == 'sbatch' else ','.join(c[1])}" for c in self.calls]


def plan(pid: str, containers: int, ram_mb: int = 512, cpu: float = 1.0) -> PackingPlan:
    return PackingPlan(pid, [ContainerPlan(id=i, instances=[
        InstancePlan("word", i, 0, Resource(ram=64 * MIB, cpu=0.5))],
        required=Resource(ram=ram_mb * MIB, cpu=cpu)) for i in range(1, containers + 1)])


def spec(tmp_path, **config) -> LaunchSpec:
    return LaunchSpec(topology_name="wc", topology_id="wc-abc", working_dir=str(tmp_path / "wc"),
                      submission=Submission(project=str(tmp_path), name="wc"),
                      scheduler="slurm", scheduler_config=config,
                      package_url="file:///p.tar.gz", package_sha256="0" * 64)


@pytest.fixture
def slurm(tmp_path):
    fake = FakeSlurm("wc-abc")
    scheduler = SlurmScheduler(spec(tmp_path), state=None, packing=plan("p1", 2),
                               commands=fake)
    scheduler.topology_config = {"topology.container.padding.ram": 300 * MIB,
                                 "topology.container.padding.cpu": 1.0}
    for c in scheduler.containers:
        scheduler._submit(c, "launch")
    fake.calls.clear()
    yield scheduler, fake
    scheduler.close()


def jobs_of(scheduler) -> dict[int, str]:
    return {c: j.job_id for c, j in scheduler.jobs.items()}


def test_restart_submits_the_new_job_before_cancelling_the_old_one(slurm):
    scheduler, fake = slurm
    old = jobs_of(scheduler)
    scheduler.restart(1)
    new = scheduler.jobs[1].job_id
    assert fake.order() == [f"sbatch {new}", f"scancel {old[1]}"]
    assert scheduler.jobs[1].incarnation == 2


def test_a_job_whose_script_refused_the_work_directory_says_so(slurm, monkeypatch):
    """The job's output goes nowhere, so its exit code is how the refusal is told: the
    event and the crash-loop error name the directory and the fix."""
    scheduler, fake = slurm
    job_id = scheduler.jobs[1].job_id
    fake.live[job_id] = ("FAILED", "node3", fake.live[job_id][2])
    fake.exit_codes[job_id] = UNSAFE_WORK_DIR_EXIT
    scheduler.check_once()
    (ended,) = [e for e in scheduler.events if e.what == "ended"]
    assert ended.detail.startswith("FAILED on node3: the job script refused "
                                   "${TMPDIR:-/tmp}/heron-UID on node3: it must be a "
                                   "directory of this user with mode 700")
    assert "heron.slurm.work.root" in ended.detail


def test_a_failed_sbatch_during_restart_leaves_every_old_job_running(slurm):
    scheduler, fake = slurm
    old = jobs_of(scheduler)
    fake.fail_sbatch = (3, SlurmError("sbatch failed (exit 1): Unable to contact slurm "
                                      "controller"))
    with pytest.raises(SlurmError, match="Unable to contact"):
        scheduler.restart(-1)
    assert jobs_of(scheduler) == old
    assert set(fake.live) == set(old.values()), "old jobs cancelled or new ones left behind"


def test_an_update_whose_new_container_cannot_be_placed_changes_nothing(slurm):
    scheduler, fake = slurm
    old = jobs_of(scheduler)
    fake.fail_sbatch = (2, SlurmUnsatisfiable("sbatch failed (exit 1): Requested node "
                                              "configuration is not available"))
    with pytest.raises(SlurmUnsatisfiable) as caught:
        scheduler.update(plan("p2", 4))
    message = str(caught.value)
    assert "old plan stays in force" in message
    assert "container 4 asks for" in message and "heron.resources.instance.ram" in message
    assert scheduler.packing.id == "p1" and jobs_of(scheduler) == old
    assert set(fake.live) == set(old.values())  # container 3's job was withdrawn


def test_an_update_resizes_a_growing_container_new_job_first_and_removes_others(slurm):
    scheduler, fake = slurm
    old = jobs_of(scheduler)
    added, removed = scheduler.update(plan("p2", 1, ram_mb=900))
    assert (added, removed) == ([], [2])
    new = scheduler.jobs[1].job_id
    assert fake.order() == [f"sbatch {new}", f"scancel {old[1]}", f"scancel {old[2]}"]
    assert "--mem=900M" in fake.calls[0][2]
    assert scheduler.packing.id == "p2" and set(scheduler.jobs) == {0, 1}


def test_container_0_is_sized_from_the_padding_keys(slurm):
    scheduler, _ = slurm
    assert scheduler._resources(0) == (1, 300)
    assert scheduler._resources(1) == (1, 512)
    scheduler.config["heron.slurm.container.memory.mb"] = 700
    assert scheduler._resources(0) == (1, 700)


def test_a_restarted_service_adopts_its_jobs_and_cancels_duplicates(tmp_path):
    fake = FakeSlurm("wc-abc")
    for container, incarnation in ((0, 1), (1, 1), (1, 2), (2, 1), (5, 1)):
        fake.next_id += 1
        fake.live[str(fake.next_id)] = ("RUNNING", "node2",
                                        job_comment("wc-abc", container, incarnation))
    fake.live["999"] = ("RUNNING", "node2", job_comment("other-id", 0, 1))
    scheduler = SlurmScheduler(spec(tmp_path, **{"heron.slurm.poll.secs": 60}), state=None,
                               packing=plan("p1", 2), commands=fake)
    try:
        scheduler.launch()
        assert not [c for c in fake.calls if c[0] == "sbatch"], fake.calls
        assert jobs_of(scheduler) == {0: "101", 1: "103", 2: "104"}
        assert scheduler.jobs[1].incarnation == 2
        assert sorted(fake.live) == ["101", "103", "104", "999"]
    finally:
        scheduler.close()


class FailingScheduler:
    """A scheduler whose restart and update raise what sbatch raised."""

    def __init__(self) -> None:
        self.restarts = 0

    def restart(self, index: int) -> None:
        self.restarts += 1
        raise SlurmError("sbatch failed (exit 1): Unable to contact slurm controller")

    def update(self, proposed):
        raise SlurmUnsatisfiable("sbatch failed (exit 1): Requested node configuration is "
                                 "not available")

    def kill(self) -> None:
        pass

    def crash_looping(self) -> dict[str, str]:
        return {}


def test_the_service_answers_a_scheduler_error_and_goes_on_serving(tmp_path):
    stop = threading.Event()
    failing = FailingScheduler()
    service = SchedulerService(spec(tmp_path), state=None, stop=stop, scheduler=failing)
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.bind("inproc://slurm-scheduler")
    dealer = ctx.socket(zmq.DEALER)
    dealer.connect("inproc://slurm-scheduler")
    thread = threading.Thread(target=service._serve, args=(router,), daemon=True)
    thread.start()

    def ask(message):
        dealer.send_multipart(encode(message))
        assert dealer.poll(5000), "the service did not answer"
        return decode(dealer.recv_multipart())
    try:
        for _ in range(2):
            answer = ask(scheduler_pb2.RestartTopologyRequest(topology_name="wc",
                                                              container_index=1))
            assert answer.status.status == common_pb2.NOTOK
            assert answer.status.message == ("sbatch failed (exit 1): Unable to contact "
                                             "slurm controller")
        answer = ask(scheduler_pb2.UpdateTopologyRequest(
            topology_name="wc", proposed_packing_plan=plan("p2", 3).to_proto()))
        assert answer.status.status == common_pb2.NOTOK
        assert "Requested node configuration is not available" in answer.status.message
        assert thread.is_alive() and failing.restarts == 2
    finally:
        stop.set()
        thread.join(5)
        dealer.close(0)
        router.close(0)
        ctx.term()


def write_digest(tmp_path) -> str:
    path = tmp_path / "zk-auth"
    path.write_text("heron:very-secret-digest\n")
    path.chmod(0o600)
    return str(path)


def run_script(tmp_path, work_root, *, executor: str = "true") -> subprocess.CompletedProcess:
    launch = spec(tmp_path, **{"heron.slurm.work.root": str(work_root),
                               "heron.slurm.python": f"/bin/{executor}"})
    launch.state = StateManagerSpec(kind="zookeeper", zk_hosts="zk:2181", zk_root="/heron",
                                    zk_auth_file=write_digest(tmp_path))
    scheduler = SlurmScheduler(launch, state=None, packing=plan("p1", 1),
                               commands=FakeSlurm("wc-abc"))
    script = scheduler.job_script(1, 1)
    return subprocess.run(["sh", "-s"], input=script, capture_output=True, text=True,
                          env={**os.environ, "SLURM_JOB_ID": "77"}, timeout=20)


def test_the_job_script_refuses_a_work_directory_others_can_read(tmp_path):
    root = tmp_path / "node"
    base = root / f"heron-{os.getuid()}"
    base.mkdir(parents=True, mode=0o755)
    base.chmod(0o755)
    done = run_script(tmp_path, root)
    assert done.returncode == UNSAFE_WORK_DIR_EXIT
    assert f"{base} has mode 755, not 700 (owner-only); refusing" in done.stderr
    assert not list(base.rglob("*"))


def test_the_job_script_leaves_no_digest_behind_when_the_job_ends(tmp_path):
    root = tmp_path / "node"
    done = run_script(tmp_path, root)
    assert done.returncode == 0, done.stderr
    base = root / f"heron-{os.getuid()}"
    assert oct(base.stat().st_mode & 0o777) == "0o700"
    left = [p for p in base.rglob("*") if p.is_file()]
    assert all(b"very-secret-digest" not in p.read_bytes() for p in left), left
    assert not (base / "wc-abc" / "job-77").exists()
    assert (base / "wc-abc" / "container-1" / "logs" / "executor-1.log").exists()
