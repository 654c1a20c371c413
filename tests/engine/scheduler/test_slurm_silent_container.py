"""A Slurm container that fell silent (its Metrics Manager stopped reporting to the
Topology Master, which goes on answering) is replaced at once, its node excluded, without
waiting for Slurm to notice the node is dead: Slurm marks a node not responding only when
its pings fail, which took about 20 s of the 24-26 s a node loss cost (issue 44, item 4).
A container that is only starting is never silent, and without a fresh word from the
Topology Master silence says nothing."""

from __future__ import annotations

import time

import pytest

from engine.scheduler.slurm.scheduler import SlurmScheduler
from tests.engine.scheduler.test_slurm_requests import FakeSlurm, plan, spec

pytestmark = pytest.mark.timeout(30)


class Seen:
    """The last-seen clock the monitor reads: container -> unix time of its last report."""

    def __init__(self) -> None:
        self.times: dict[int, float] = {}

    def poll(self, containers) -> None:
        pass

    def last(self, container: int) -> float | None:
        return self.times.get(container)


@pytest.fixture
def slurm(tmp_path):
    fake = FakeSlurm("wc-abc")
    scheduler = SlurmScheduler(spec(tmp_path, **{"heron.slurm.container.silent.secs": 6}),
                               state=None, packing=plan("p1", 2), commands=fake)
    scheduler.last_seen = Seen()
    for c in scheduler.containers:
        scheduler._submit(c, "launch")
    scheduler.check_once()  # every job seen running
    fake.calls.clear()
    yield scheduler, fake, scheduler.last_seen
    scheduler.close()


def test_a_container_silent_while_the_topology_master_answers_is_replaced_off_its_node(slurm):
    scheduler, fake, seen = slurm
    now = time.time()
    old = scheduler.jobs[2].job_id
    seen.times = {0: now, 1: now, 2: now - 7}  # container 2 last reported 7 s ago
    scheduler.jobs[2].running_at = now - 60
    scheduler.check_once()
    new = scheduler.jobs[2].job_id
    assert new != old and fake.order() == [f"sbatch {new}", f"scancel {old}"]
    sbatch_options = fake.calls[0][2]
    assert "--exclude=node1" in sbatch_options  # not back onto the node that went quiet
    lost = [e for e in scheduler.events if e.what == "node lost"][-1]
    assert lost.container == 2 and "silent for 7" in lost.detail
    assert lost.extra["failed_at"] == seen.times[2]  # the recovery is timed from then


def test_a_starting_container_and_a_silent_topology_master_replace_nothing(slurm):
    scheduler, fake, seen = slurm
    now = time.time()
    # started 20 s ago and has not reported since: still starting (slow venv, big package)
    scheduler.jobs[2].running_at = now - 20
    seen.times = {0: now, 1: now, 2: now - 30}
    scheduler.check_once()
    assert fake.calls == []
    # the Topology Master itself is not answering: nobody's silence means anything
    scheduler.jobs[2].running_at = now - 60
    seen.times = {0: now - 30, 1: now - 30, 2: now - 30}
    scheduler.check_once()
    assert fake.calls == []
    # a container that reports within the window is fine
    seen.times = {0: now, 1: now, 2: now - 2}
    scheduler.check_once()
    assert fake.calls == []
