"""Heron's scheduler contract on Slurm: one Slurm job per container.

Heron's own Slurm scheduler starts every container in one multi-node job, which Slurm
kills and requeues whole when any node fails. Ours submits each container as its own
one-node job (``sbatch``), so one container can be restarted, added, removed or moved
alone. The job runs ``python -m engine.executor.remote`` (engine/executor/remote.py),
which fetches the package, checks it and becomes the container's executor; Slurm picks
the node, with the CPU and memory the packing plan asks for that container.

A monitor thread keeps every container running, on whichever nodes are alive:

* a job that ended (any state: NODE_FAIL, TIMEOUT, PREEMPTED, FAILED, or one that
  completed, which a container never does by itself) is submitted again;
* a running job on a node Slurm reports DOWN, DRAINED, FAILED or NOT_RESPONDING is
  cancelled and submitted again with that node excluded; the exclusion lasts while the
  node stays unhealthy;
* a running container that reported to the Topology Master since its job started and
  then fell silent for ``heron.slurm.container.silent.secs`` (6), while the Topology
  Master answers, is treated the same way, its node excluded for
  ``heron.slurm.node.suspect.secs`` (60) or until Slurm says it is healthy after that.
  Slurm notices a dead node only when its pings fail and the node is marked not
  responding (``SlurmdTimeout``, ``MessageTimeout``: about 20 s with the test cluster's
  10 and 5), the container's silence in a few seconds: the Metrics Manager of each
  container reports every second;
* each resubmission is a new *incarnation* of its container: the Topology Master refuses
  a Stream Manager of an older one, so a container cut off by a partition never rejoins
  once it has been replaced.

Every decision is logged and kept in :attr:`events` (time, container, job, reason).
``heron list`` and the tracker show each recovery's time from the container's failure
(its last report to the Topology Master) to its replacement reporting again, with when
the loss was noticed and the new job ran on the way (recovery.py).

Keys (``scheduler.yaml``): ``heron.slurm.partition``, ``heron.slurm.job.time.limit``
(``sbatch --time``; default unlimited), ``heron.slurm.poll.secs`` (2),
``heron.slurm.submit.timeout.secs`` (30: a controller that does not answer within it is
an error), ``heron.slurm.work.root`` (node-local working directories; default the node's
temporary directory), ``heron.slurm.python`` (the Python on the nodes; default this one),
``heron.slurm.conf`` (a ``slurm.conf`` for the client commands, as ``SLURM_CONF``),
``heron.network.bind.interface`` (else each node binds the address its hostname resolves
to), ``heron.slurm.container.cpus`` / ``.memory.mb`` (minimums when the packing plan
asks for less; sizing.py sizes every container, container 0 included).

Restart and update submit new jobs before they cancel the ones replaced, and cancel what
they submitted when a later step fails, so a refused request leaves the old jobs in
force. Each job's comment names the submission, container and incarnation (jobscript.py):
a restarted service adopts the jobs it finds, and ``heron kill`` cancels them without
the service (cleanup.py).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.common.launch import LaunchSpec
from engine.common.plan.topology_config import topology_config
from engine.common.process.restart_policy import RestartTracker
from engine.common.security.guard import SocketSecurity
from engine.common.security.private import write_private_file
from engine.packing import PackingPlan
from engine.scheduler.slurm.cleanup import cancel_topology_jobs
from engine.scheduler.slurm.commands import (
    ENDED_JOB_STATES,
    SlurmCommands,
    SlurmError,
    SlurmUnsatisfiable,
)
from engine.scheduler.slurm.jobscript import (
    UNSAFE_WORK_DIR_EXIT,
    job_comment,
    job_script,
    parse_comment,
    topology_comment_prefix,
)
from engine.scheduler.slurm.recovery import LastSeen, ask_topology_master, recovery_times
from engine.scheduler.slurm.sizing import container_resources, grew, placement_hint
from engine.spi import KillOnce, ServiceScheduler
from engine.spi.statemgr import StateManager
from engine.uploader import delete_package

log = logging.getLogger("heron.scheduler.slurm")

#: node states in which a node's jobs are given up on (squeue/sinfo spellings, any case)
UNHEALTHY_NODE_STATES = ("down", "drain", "drained", "draining", "fail", "failing",
                         "not_responding", "no_respond", "unknown", "future", "power_down",
                         "powered_down", "reboot")

#: the scheduler's status beside the launch file (``heron list`` reads it)
STATUS_FILE = "scheduler-status.json"


@dataclass
class ContainerJob:
    container: int
    job_id: str
    incarnation: int
    submitted_at: float
    node: str = ""
    state: str = "PENDING"
    #: first seen running (what "recovered" means for a resubmitted container)
    running_at: float | None = None
    #: the nodes its sbatch excluded
    excluded: list[str] = field(default_factory=list)


@dataclass
class SchedulerEvent:
    time: float
    container: int
    job_id: str
    what: str
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def node_down(state: str) -> bool:
    """Whether Slurm itself has given the node up (down, drained, failed), as opposed to
    a node that merely missed a ping ('*')."""
    name = state.lower().rstrip("~#!%$@^-*")
    return name in ("down", "drain", "drained", "drng", "draining", "fail", "failg",
                    "failing")


def node_unhealthy(state: str) -> bool:
    """Whether jobs on a node in ``state`` (sinfo's short or long form) are lost."""
    state = state.lower()
    if state.endswith("*"):  # sinfo marks a node that does not respond with '*'
        return True
    short = {"down": "down", "drain": "drain", "drng": "draining", "fail": "fail",
             "failg": "failing", "unk": "unknown", "npc": "not_responding",
             "boot": "reboot", "pow_dn": "power_down"}
    name = short.get(state.rstrip("~#!%$@^-"), state.rstrip("~#!%$@^-"))
    return name in UNHEALTHY_NODE_STATES


class SlurmScheduler(KillOnce, ServiceScheduler):
    """Start, watch, restart, update and kill one topology's containers as Slurm jobs."""

    def __init__(self, spec: LaunchSpec, *, state: StateManager, packing: PackingPlan | None = None,
                 commands: SlurmCommands | None = None) -> None:
        self.spec = spec
        self.state = state
        self.config = dict(spec.scheduler_config)
        self.packing = packing
        self.commands = commands or SlurmCommands(
            conf=self.config.get("heron.slurm.conf"),
            timeout=float(self.config.get("heron.slurm.submit.timeout.secs", 30)))
        self.poll_secs = float(self.config.get("heron.slurm.poll.secs", 2.0))
        self.node_lost_secs = float(self.config.get("heron.slurm.node.lost.secs", 5.0))
        self.silent_secs = float(self.config.get("heron.slurm.container.silent.secs", 6.0))
        self.suspect_secs = float(self.config.get("heron.slurm.node.suspect.secs", 60.0))
        #: node -> monotonic time a container on it fell silent (excluded meanwhile)
        self.suspect: dict[str, float] = {}
        #: node -> monotonic time it was first seen not responding (or down)
        self.unhealthy_since: dict[str, float] = {}
        self.jobs: dict[int, ContainerJob] = {}
        self.events: list[SchedulerEvent] = []
        self.excluded: set[str] = set()
        #: per container: restarts under the topology's policy (a job that keeps failing
        #: without running is resubmitted with backoff, and reported crash-looping)
        self.trackers: dict[int, RestartTracker] = {}
        #: container -> (monotonic time, reason) of a resubmission waiting for its backoff
        self.due: dict[int, tuple[float, str]] = {}
        self._incarnations: dict[int, int] = {}
        #: each container's last sign of life, the clock recoveries are timed on
        self.last_seen = LastSeen(ask_topology_master(
            state, spec.topology_name, lambda: SocketSecurity.for_launch(spec)))
        #: containers replaced and not yet reporting again
        self._rejoining: set[int] = set()
        #: the topology's own keys (container 0's padding), read at launch
        self.topology_config: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None
        self._killed = False
        self._kill_log = log
        if not spec.package_url or not spec.package_sha256:
            raise SlurmError(f"{spec.topology_name}: no package URL in the launch spec; a "
                             f"Slurm topology is submitted with `heron submit CLUSTER`")

    # -- the contract ---------------------------------------------------------------------
    @property
    def containers(self) -> list[int]:
        return self._containers_of(self.packing)

    @staticmethod
    def _containers_of(packing: PackingPlan | None) -> list[int]:
        if packing is None:
            return []
        return list(range(0, max((c.id for c in packing.containers), default=0) + 1))

    def launch(self) -> list[int]:
        """Adopt the jobs of this submission Slurm still runs (a restarted service), submit
        one for every other container, then watch them. Nothing is left half-queued: a
        failure cancels what this call submitted."""
        if self.packing is None:
            stored = self.state.get("packingplans", self.spec.topology_name)
            if stored is None:
                raise SlurmError(f"no packing plan for {self.spec.topology_name}")
            self.packing = PackingPlan.from_proto(stored)
        self._load_topology_config()
        adopted = self._adopt()
        submitted: list[str] = []
        try:
            for c in self.containers:
                if c not in adopted:
                    submitted.append(self._submit(c, "launch").job_id)
        except SlurmError:
            self._cancel_quietly(submitted)
            raise
        self.write_status()
        self._monitor = threading.Thread(target=self._watch, name="slurm-monitor", daemon=True)
        self._monitor.start()
        return self.containers

    def _load_topology_config(self) -> None:
        """The topology's keys that size container 0 (its padding)."""
        try:
            topology = self.state.get("topologies", self.spec.topology_name)
        except Exception as exc:  # a state manager that does not answer: default padding
            log.warning("cannot read the topology's config: %s", exc)
            return
        if topology is not None:
            self.topology_config = topology_config(topology)

    def _adopt(self) -> set[int]:
        """Take over the running or pending jobs of this submission (their comments name
        the container and incarnation); cancel duplicates and containers no longer
        planned. Returns the containers adopted."""
        found = self.commands.topology_jobs(topology_comment_prefix(self.spec.topology_id))
        best: dict[int, ContainerJob] = {}
        extra: list[str] = []
        for job_id, (state, node, comment) in sorted(found.items()):
            parsed = parse_comment(comment, self.spec.topology_id)
            if parsed is None or state in ENDED_JOB_STATES:
                continue
            container, incarnation = parsed
            if container not in self.containers:
                extra.append(job_id)
                continue
            job = ContainerJob(container, job_id, incarnation, time.time(), node=node,
                               state=state)
            kept = best.get(container)
            if kept is None or incarnation > kept.incarnation:
                if kept is not None:
                    extra.append(kept.job_id)
                best[container] = job
            else:
                extra.append(job_id)
        with self._lock:
            for c, job in best.items():
                self.jobs[c] = job
                self._incarnations[c] = max(self._incarnations.get(c, 0), job.incarnation)
                self._record(c, job.job_id, "adopted", f"{job.state} on {job.node or '?'}",
                             incarnation=job.incarnation)
        if extra:
            log.info("cancelling jobs of %s no container needs: %s", self.spec.topology_name,
                     " ".join(extra))
            self._cancel_quietly(extra)
        return set(best)

    def restart(self, container: int = -1) -> None:
        """Replace the jobs of ``container`` (-1: all): every new job is submitted before
        any old one is cancelled, so a failed sbatch leaves the old jobs running."""
        targets = self.containers if container == -1 else [container]
        for c in targets:
            if c not in self.containers:
                raise ValueError(f"no container {c} in {self.spec.topology_name}; containers "
                                 f"are 0..{self.containers[-1]} (-1 for all)")
        with self._lock:
            started = self._submit_all(targets, "restart requested", self.packing)
            old = [self.jobs[c].job_id for c in targets if c in self.jobs]
            self._commit(started)
            self._cancel_quietly(old)

    def update(self, proposed: PackingPlan) -> tuple[list[int], list[int]]:
        """Move to ``proposed``: submit the added containers' jobs and new, larger jobs
        for containers whose resources grow, and only once all of them were accepted
        cancel the jobs they replace and those of removed containers. Any failure
        cancels what this update submitted and leaves the old plan in force."""
        with self._lock:
            before = set(self.containers)
            after = set(self._containers_of(proposed))
            added, removed = sorted(after - before), sorted(before - after, reverse=True)
            grown = [c for c in sorted(after & before) if c in self.jobs and c not in self.due
                     and grew(self._resources(c, self.packing), self._resources(c, proposed))]
            try:
                started = self._submit_all(added + grown, "heron update", proposed)
            except SlurmError as exc:
                raise type(exc)(f"update to packing plan {proposed.id} refused, the old plan "
                                f"stays in force: {exc}") from None
            replaced = [self.jobs[c].job_id for c in grown]
            self.packing = proposed
            self._commit(started)
            self._cancel_quietly(replaced)
            for c in removed:
                self.due.pop(c, None)
                job = self.jobs.pop(c, None)
                if job is not None:
                    self._record(c, job.job_id, "removed", "heron update")
                    self._cancel_quietly([job.job_id])
        self.write_status()
        return added, removed

    def crash_looping(self) -> dict[str, str]:
        """Containers whose jobs keep ending with no progress (e.g. a package the nodes
        refuse), with the last reason; they are still resubmitted, with backoff."""
        with self._lock:
            return {f"executor-{c}": t.last_error for c, t in self.trackers.items()
                    if t.crash_looping}

    def _tracker(self, container: int) -> RestartTracker:
        if container not in self.trackers:
            self.trackers[container] = RestartTracker(f"executor-{container}",
                                                      self.spec.restart_policy)
        return self.trackers[container]

    def stop(self) -> None:
        """Cancel every job and wait (bounded) until Slurm lists none of them."""
        self._stop.set()
        if self._monitor is not None and self._monitor is not threading.current_thread():
            self._monitor.join(self.poll_secs + self.commands.timeout + 5)
        with self._lock:
            ids = [job.job_id for job in self.jobs.values()]
        self._cancel_quietly(ids)
        # and any job of this submission it did not know of (an sbatch whose answer was
        # lost), waiting (bounded) until Slurm lists none of them as live
        try:
            cancel_topology_jobs(self.commands, self.spec.topology_id, wait_secs=30)
        except SlurmError as exc:
            log.warning("%s", exc)

    # kill(): KillOnce's (stop, clean the state, then _after_kill), as every scheduler
    def _after_kill(self) -> None:
        """The uploaded package goes with the topology."""
        delete_package(self.spec)

    def close(self) -> None:
        self._stop.set()

    # -- jobs -----------------------------------------------------------------------------
    def _resources(self, container: int, packing: PackingPlan | None = None) -> tuple[int, int]:
        """(CPUs, MiB) for a container's job (engine/scheduler/slurm/sizing.py)."""
        return container_resources(packing if packing is not None else self.packing,
                                   container, self.topology_config, self.config)

    def job_script(self, container: int, incarnation: int) -> str:
        """The batch script of one container's job (engine/scheduler/slurm/jobscript.py)."""
        return job_script(self.spec, self.config, container, incarnation)

    def _submit(self, container: int, reason: str) -> ContainerJob:
        with self._lock:
            job = self._sbatch(container, reason, self.packing)
            self.jobs[container] = job
            return job

    def _submit_all(self, containers: list[int], reason: str,
                    packing: PackingPlan | None) -> list[ContainerJob]:
        """New jobs for ``containers``, none recorded yet; on a failure the ones already
        submitted are cancelled and the error raised."""
        started: list[ContainerJob] = []
        try:
            for c in containers:
                started.append(self._sbatch(c, reason, packing))
        except SlurmError:
            for job in started:
                self._record(job.container, job.job_id, "withdrawn", "a later sbatch failed")
            self._cancel_quietly([job.job_id for job in started])
            raise
        return started

    def _commit(self, started: list[ContainerJob]) -> None:
        for job in started:
            self.jobs[job.container] = job
            self.due.pop(job.container, None)

    def _sbatch(self, container: int, reason: str, packing: PackingPlan | None) -> ContainerJob:
        """Submit one job for ``container`` sized by ``packing``; it is not recorded as
        the container's job yet (the caller decides)."""
        incarnation = self._incarnations.get(container, 0) + 1
        self._incarnations[container] = incarnation
        cpus, mem_mb = self._resources(container, packing)
        options = [f"--job-name=heron-{self.spec.topology_name}-{container}",
                   f"--comment={job_comment(self.spec.topology_id, container, incarnation)}",
                   "--nodes=1", "--ntasks=1", f"--cpus-per-task={cpus}", f"--mem={mem_mb}M",
                   "--output=/dev/null", "--no-requeue", "--kill-on-invalid-dep=yes"]
        limit = self.config.get("heron.slurm.job.time.limit")
        if limit not in (None, "", "0", 0, "unlimited"):
            options.append(f"--time={limit}")
        if self.config.get("heron.slurm.partition"):
            options.append(f"--partition={self.config['heron.slurm.partition']}")
        if self.excluded:
            options.append(f"--exclude={','.join(sorted(self.excluded))}")
        try:
            job_id = self.commands.sbatch(self.job_script(container, incarnation), options)
        except SlurmUnsatisfiable as exc:
            raise SlurmUnsatisfiable(f"{exc}; {placement_hint(container, cpus, mem_mb)}"
                                     ) from None
        job = ContainerJob(container, job_id, incarnation, time.time(),
                           excluded=sorted(self.excluded))
        self._record(container, job_id, "submitted", reason,
                     incarnation=incarnation, excluded=sorted(self.excluded))
        return job

    def _fell_silent(self, container: int, job: ContainerJob) -> bool:
        """Whether a running container stopped reporting while the Topology Master goes
        on answering: it reported since its job began running (a starting container is
        not silent, however long its start takes), and nothing for ``silent_secs``.
        Container 0 runs the Topology Master: its silence is the Topology Master's, and
        Slurm's view of its node decides."""
        if container == 0 or job.running_at is None or not job.node:
            return False
        now = time.time()
        tmanager = self.last_seen.last(0)
        if tmanager is None or now - tmanager > max(3.0, 2 * self.poll_secs):
            return False  # no fresh word from the Topology Master: silence tells nothing
        seen = self.last_seen.last(container)
        return seen is not None and seen > job.running_at and now - seen >= self.silent_secs

    def _replace(self, container: int, reason: str) -> None:
        """A new job for ``container``, then the old one cancelled (the monitor's move
        off an unhealthy node)."""
        old = self.jobs.get(container)
        self._submit(container, reason)
        if old is not None:
            self._cancel_quietly([old.job_id])

    def _cancel_quietly(self, job_ids: list[str]) -> None:
        try:
            self.commands.scancel(job_ids)
        except SlurmError as exc:
            log.warning("scancel %s: %s", " ".join(job_ids), exc)

    def _record(self, container: int, job_id: str, what: str, detail: str = "",
                **extra: Any) -> None:
        event = SchedulerEvent(time.time(), container, job_id, what, detail, extra)
        self.events.append(event)
        del self.events[:-500]
        log.info("container %d job %s: %s%s", container, job_id, what,
                 f" ({detail})" if detail else "")

    # -- the monitor ----------------------------------------------------------------------
    def _watch(self) -> None:
        while not self._stop.wait(self.poll_secs):
            try:
                self.check_once()
            except SlurmError as exc:
                log.warning("cannot read Slurm's state: %s", exc)
            except Exception:  # the monitor must outlive any one bad answer
                log.exception("slurm monitor")

    def check_once(self) -> None:
        """One look at the jobs and nodes; replace what is lost."""
        if self.jobs:  # outside the lock: the Topology Master may take a second
            self.last_seen.poll(self.containers)
        try:
            self._check()
        finally:
            self.write_status()

    def write_status(self) -> None:
        """``<working dir>/scheduler-status.json``: each container's job, node and state,
        the nodes excluded and the recoveries so far (``heron list`` shows them)."""
        status = self.status()
        try:
            write_private_file(self.spec.home / STATUS_FILE,
                               json.dumps(status, indent=1).encode())
        except OSError as exc:
            log.warning("cannot write %s: %s", STATUS_FILE, exc)

    def status(self) -> dict[str, Any]:
        """Each container's job, node and state, the nodes excluded, the recoveries."""
        with self._lock:
            return {"scheduler": "slurm", "time": time.time(),
                    "jobs": [asdict(job) for _, job in sorted(self.jobs.items())],
                    "excluded": sorted(self.excluded),
                    "recoveries": self.recovery_times()}

    def _check(self) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            nodes = self.commands.node_states()
            now = time.monotonic()
            for n, s in nodes.items():
                if node_unhealthy(s):
                    self.unhealthy_since.setdefault(n, now)
                else:
                    self.unhealthy_since.pop(n, None)
            # a node is lost when Slurm says it is down, or when it has not responded for
            # node_lost_secs (a node that misses one ping is not abandoned at once)
            unhealthy = {n for n, since in self.unhealthy_since.items()
                         if node_down(nodes.get(n, "")) or now - since >= self.node_lost_secs}
            for n, since in list(self.suspect.items()):
                if now - since >= self.suspect_secs and n not in unhealthy:
                    del self.suspect[n]
            self.excluded = unhealthy | set(self.suspect)
            listed = self.commands.topology_jobs(topology_comment_prefix(self.spec.topology_id))
            self._cancel_strays(listed)
            for c, job in sorted(self.jobs.items()):
                state, node, _ = listed.get(job.job_id, ("", "", ""))
                if not state:
                    state, node = self.commands.job_state(job.job_id)
                job.state, job.node = state, node or job.node
                tracker = self._tracker(c)
                if state == "RUNNING" and job.running_at is None:
                    job.running_at = time.time()
                    tracker.started()
                    self._record(c, job.job_id, "running", f"on {job.node}",
                                 incarnation=job.incarnation)
                elif state == "RUNNING":
                    tracker.tick()
                if c in self.due:
                    continue  # ended already; waiting for its backoff
                if state in ENDED_JOB_STATES or state == "GONE":
                    ran = 1 if job.running_at is not None else 0
                    detail = f"{state} on {job.node or '?'}{self._why_failed(job, state)}"
                    self._record(c, job.job_id, "ended", detail, ran=ran,
                                 failed_at=self.last_seen.last(c))
                    self._rejoining.add(c)
                    # a job that never ran, or ran briefly, backs off like any process
                    delay = tracker.failed(f"job {job.job_id} {detail}",
                                           progressed=state in ("NODE_FAIL", "PREEMPTED",
                                                                "TIMEOUT"))
                    self.due[c] = (time.monotonic() + delay, f"job {job.job_id} ended {state}")
                elif state == "RUNNING" and self._fell_silent(c, job):
                    silent = time.time() - (self.last_seen.last(c) or 0.0)
                    self.suspect[job.node] = now
                    self.excluded = self.excluded | {job.node}
                    self._record(c, job.job_id, "node lost",
                                 f"container {c} on {job.node} silent for {silent:.1f} s",
                                 failed_at=self.last_seen.last(c))
                    self._rejoining.add(c)
                    self._replace(c, f"container {c} on {job.node} fell silent")
                elif state in ("RUNNING", "COMPLETING", "CONFIGURING") and job.node in unhealthy:
                    self._record(c, job.job_id, "node lost",
                                 f"{job.node} is {nodes.get(job.node, '?')}",
                                 failed_at=self.last_seen.last(c))
                    self._rejoining.add(c)
                    self._replace(c, f"node {job.node} is {nodes.get(job.node, '?')}")
                elif state == "PENDING" and set(job.excluded) - self.excluded:
                    # it excludes a node that is healthy again: let it go there too
                    self.commands.set_excluded(job.job_id, sorted(self.excluded))
                    self._record(c, job.job_id, "exclusions updated",
                                 ",".join(sorted(self.excluded)) or "none")
                    job.excluded = sorted(self.excluded)
            self._note_rejoined()
            now = time.monotonic()
            for c, (at, why) in sorted(self.due.items()):
                if at <= now and c in self.containers:
                    del self.due[c]
                    self._submit(c, why)

    def _cancel_strays(self, listed: dict[str, tuple[str, str, str]]) -> None:
        """Cancel live jobs of this submission that are no container's job: an sbatch
        that timed out but reached the controller, a job a failed step could not cancel."""
        known = {job.job_id for job in self.jobs.values()}
        for job_id, (state, _, comment) in sorted(listed.items()):
            if job_id in known or state in ENDED_JOB_STATES or state == "COMPLETING":
                continue
            parsed = parse_comment(comment, self.spec.topology_id)
            self._record(parsed[0] if parsed else -1, job_id, "stray", f"{state}; cancelled")
            self._cancel_quietly([job_id])

    def _why_failed(self, job: ContainerJob, state: str) -> str:
        """What the job script said, when it refused to run (its output goes nowhere)."""
        if state != "FAILED" or self.commands.exit_code(job.job_id) != UNSAFE_WORK_DIR_EXIT:
            return ""
        root = self.config.get("heron.slurm.work.root") or "${TMPDIR:-/tmp}"
        return (f": the job script refused {root}/heron-UID on {job.node or 'the node'}: it "
                "must be a directory of this user with mode 700 (it would hold the "
                "topology's secrets); fix it there or set heron.slurm.work.root")

    def _note_rejoined(self) -> None:
        """A replaced container whose processes report after its new job started running
        is counted again: its recovery ends there (recovery.py)."""
        for c in sorted(self._rejoining):
            job = self.jobs.get(c)
            if job is None or c not in self.containers:
                self._rejoining.discard(c)
                continue
            last = self.last_seen.last(c)
            if job.running_at is not None and last is not None and last > job.running_at:
                self._record(c, job.job_id, "rejoined", "its processes report again",
                             reported_at=last)
                self._rejoining.discard(c)

    def recovery_times(self) -> list[dict[str, Any]]:
        """For each replacement: how long from the container's failure (its last report)
        to its replacement counted again (what ``heron list`` and the tracker show)."""
        return recovery_times(self.events)
