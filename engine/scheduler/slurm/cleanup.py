"""Cancel every job of one submission, whoever submitted it and whether or not its
scheduler service still runs: the jobs are found by the comment each carries
(engine/scheduler/slurm/jobscript.py), so a service killed with SIGKILL, or an sbatch
whose answer was lost, leaves nothing ``heron kill`` cannot find."""

from __future__ import annotations

import logging
import time

from engine.scheduler.slurm.commands import ENDED_JOB_STATES, SlurmCommands, SlurmError
from engine.scheduler.slurm.jobscript import topology_comment_prefix

log = logging.getLogger("heron.scheduler.slurm")


def live_topology_jobs(commands: SlurmCommands, topology_id: str) -> list[str]:
    """The ids of this submission's jobs that are pending or running."""
    found = commands.topology_jobs(topology_comment_prefix(topology_id))
    return sorted(j for j, (state, _, _) in found.items() if state not in ENDED_JOB_STATES)


def cancel_topology_jobs(commands: SlurmCommands, topology_id: str, *,
                         wait_secs: float = 30.0) -> list[str]:
    """scancel every live job of the submission, then wait (up to ``wait_secs``) until
    Slurm lists none as live. Returns the ids cancelled; raises :class:`SlurmError` when
    Slurm cannot be asked or the jobs outlive the wait."""
    cancelled: list[str] = []
    deadline = time.monotonic() + wait_secs
    while True:
        live = live_topology_jobs(commands, topology_id)
        if not live:
            return cancelled
        fresh = [j for j in live if j not in cancelled]
        if fresh:
            commands.scancel(fresh)
            cancelled += fresh
        if time.monotonic() >= deadline:
            raise SlurmError(f"jobs {' '.join(live)} of {topology_id} were still listed "
                             f"{wait_secs:g}s after scancel")
        time.sleep(0.5)
