"""What `heron kill` removes without the scheduler service: the submission's live Slurm
jobs (found by their comment, other topologies' left alone), and the working
directory's secrets and built package (its logs stay)."""

from __future__ import annotations

import pytest

from engine.scheduler.slurm.cleanup import cancel_topology_jobs
from engine.scheduler.slurm.commands import SlurmError
from engine.scheduler.slurm.jobscript import job_comment
from engine.submitter.cleanup import scrub_working_dir
from tests.engine.scheduler.test_slurm_requests import FakeSlurm

pytestmark = pytest.mark.timeout(30)


def test_kill_cancels_every_live_job_of_the_submission_and_no_other():
    fake = FakeSlurm("wc-abc")
    fake.live = {"1": ("RUNNING", "node1", job_comment("wc-abc", 0, 1)),
                 "2": ("PENDING", "", job_comment("wc-abc", 1, 3)),
                 "3": ("COMPLETED", "node2", job_comment("wc-abc", 2, 1)),
                 "4": ("RUNNING", "node2", job_comment("wc-abcd", 0, 1)),
                 "5": ("RUNNING", "node3", "someone else's job")}
    assert cancel_topology_jobs(fake, "wc-abc", wait_secs=5) == ["1", "2"]
    assert sorted(fake.live) == ["3", "4", "5"]


def test_jobs_slurm_keeps_listing_are_an_error_naming_them():
    class Stubborn(FakeSlurm):
        def scancel(self, job_ids):
            self.calls.append(("scancel", list(job_ids)))

    fake = Stubborn("wc-abc")
    fake.live = {"7": ("RUNNING", "node1", job_comment("wc-abc", 0, 1))}
    with pytest.raises(SlurmError, match="jobs 7 of wc-abc were still listed 1s after scancel"):
        cancel_topology_jobs(fake, "wc-abc", wait_secs=1)


def test_scrubbing_a_working_dir_keeps_its_logs(tmp_path):
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "zk-auth").write_text("heron:secret\n")
    (tmp_path / "secrets" / "topology.keys").write_bytes(b"keys")
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "wc.tar.gz").write_bytes(b"tar")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "scheduler.log").write_text("log\n")
    scrub_working_dir(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == \
        ["logs", "logs/scheduler.log"]
