"""Cancel every job of one submission, whoever submitted it and whether or not its
scheduler service still runs: the jobs are found by the comment each carries
(engine/scheduler/slurm/jobscript.py), so a service killed with SIGKILL, or an sbatch
whose answer was lost, leaves nothing ``heron kill`` cannot find. Then clean the nodes:
a job whose node died never ran its own cleanup, so ``heron kill`` runs a cleanup job on
every node (:func:`clean_nodes`), and names the nodes it could not clean."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from engine.scheduler.slurm.commands import ENDED_JOB_STATES, SlurmCommands, SlurmError
from engine.scheduler.slurm.jobscript import (
    cleanup_comment,
    cleanup_script,
    topology_comment_prefix,
)

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


#: how long ``heron kill`` waits for the nodes' cleanup jobs
CLEANUP_WAIT_SECS = 30.0


def clean_nodes(commands: SlurmCommands, config: Mapping[str, Any], topology_id: str, *,
                wait_secs: float = CLEANUP_WAIT_SECS) -> dict[str, str]:
    """Run a cleanup job on every node of the cluster (jobscript.cleanup_script: the
    topology's directory scrubbed, and any other ended topology's), and wait up to
    ``wait_secs`` for them. Returns node -> why it is not clean yet, for the nodes where
    the job did not run to completion: one that is down keeps its job pending, so Slurm
    runs it when the node returns. Raises :class:`SlurmError` when Slurm cannot be asked
    which nodes there are."""
    nodes = commands.node_states()
    script = cleanup_script(config, topology_id)
    jobs: dict[str, str] = {}
    problems: dict[str, str] = {}
    for node, state in sorted(nodes.items()):
        options = [f"--job-name=heron-cleanup-{topology_id}",
                   f"--comment={cleanup_comment(topology_id, node)}",
                   f"--nodelist={node}", "--nodes=1", "--ntasks=1", "--cpus-per-task=1",
                   "--mem=16M", "--time=5", "--output=/dev/null", "--no-requeue"]
        if config.get("heron.slurm.partition"):
            options.append(f"--partition={config['heron.slurm.partition']}")
        try:
            jobs[node] = commands.sbatch(script, options)
        except SlurmError as exc:
            problems[node] = f"{state}: its cleanup job was refused: {exc}"
    deadline = time.monotonic() + wait_secs
    pending = dict(jobs)
    while pending:
        listed = commands.jobs(list(pending.values()))
        for node, job_id in list(pending.items()):
            state, _, reason = listed.get(job_id, ("", "", ""))
            if not state:
                state, _ = commands.job_state(job_id)
            if state == "COMPLETED":
                del pending[node]
            elif state in ENDED_JOB_STATES or state == "GONE":
                del pending[node]
                problems[node] = (f"its cleanup job {job_id} ended {state} (exit "
                                  f"{commands.exit_code(job_id)})")
            elif time.monotonic() >= deadline:
                del pending[node]
                problems[node] = (f"{nodes[node]}: its cleanup job {job_id} is {state}"
                                  f"{f' ({reason})' if reason and reason != 'None' else ''}; "
                                  f"it stays queued and runs when the node can take it")
        if pending:
            time.sleep(0.5)
    for node, why in problems.items():
        log.warning("node %s not cleaned of %s: %s", node, topology_id, why)
    return problems
