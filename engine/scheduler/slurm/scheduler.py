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
* each resubmission is a new *incarnation* of its container: the Topology Master refuses
  a Stream Manager of an older one, so a container cut off by a partition never rejoins
  once it has been replaced.

Every decision is logged and kept in :attr:`events` (time, container, job, reason),
which is what ``heron list`` and the tracker show as the time to recover.

Keys (``scheduler.yaml``): ``heron.slurm.partition``, ``heron.slurm.job.time.limit``
(``sbatch --time``; default unlimited), ``heron.slurm.poll.secs`` (2),
``heron.slurm.submit.timeout.secs`` (30: a controller that does not answer within it is
an error), ``heron.slurm.work.root`` (node-local working directories; default the node's
temporary directory), ``heron.slurm.python`` (the Python on the nodes; default this one),
``heron.slurm.conf`` (a ``slurm.conf`` for the client commands, as ``SLURM_CONF``),
``heron.network.bind.interface`` (else each node binds the address its hostname resolves
to), ``heron.slurm.container.cpus`` / ``.memory.mb`` (minimums when the packing plan
asks for less).
"""

from __future__ import annotations

import json
import logging
import math
import os
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.launch import LaunchSpec
from engine.packing import PackingPlan
from engine.process.restart_policy import RestartTracker
from engine.process.spawn import with_code_root
from engine.security.private import write_private_file
from engine.spi import KillOnce, ServiceScheduler
from engine.statemgr.zookeeper import read_digest_file
from engine.uploader import delete_package

log = logging.getLogger("heron.scheduler.slurm")

#: node states in which a node's jobs are given up on (squeue/sinfo spellings, any case)
UNHEALTHY_NODE_STATES = ("down", "drain", "drained", "draining", "fail", "failing",
                         "not_responding", "no_respond", "unknown", "future", "power_down",
                         "powered_down", "reboot")
#: job states that mean "not running and will not run by itself"
ENDED_JOB_STATES = ("BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
                    "OUT_OF_MEMORY", "PREEMPTED", "TIMEOUT", "SPECIAL_EXIT", "REVOKED")


#: the scheduler's status beside the launch file (``heron list`` reads it)
STATUS_FILE = "scheduler-status.json"


class SlurmError(Exception):
    """A Slurm command failed or did not answer; the text names the command and why.
    ``unsatisfiable``: Slurm says the request can never run (no node that big, no such
    partition), so retrying is pointless and the submitter must change it."""

    unsatisfiable = False


class SlurmUnsatisfiable(SlurmError):
    unsatisfiable = True


#: what sbatch says when no node of the cluster could ever run the job
_NEVER = ("Requested node configuration is not available", "Invalid partition",
          "More processors requested than permitted", "Node count specification invalid",
          "Memory required by task is not available", "invalid partition specified")


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


class SlurmCommands:
    """The Slurm client commands, bounded in time, their failures as SlurmError."""

    def __init__(self, *, conf: str | None = None, timeout: float = 30.0) -> None:
        self.env = dict(os.environ)
        if conf:
            self.env["SLURM_CONF"] = conf
        self.timeout = timeout

    def run(self, argv: list[str], *, stdin: str | None = None) -> str:
        try:
            done = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                                  timeout=self.timeout, env=self.env)
        except FileNotFoundError:
            raise SlurmError(f"{argv[0]}: not found; install Slurm's client commands "
                             f"(Debian: slurm-client) on this machine") from None
        except subprocess.TimeoutExpired:
            raise SlurmError(f"{' '.join(argv[:2])}: the Slurm controller did not answer "
                             f"within {self.timeout:g}s") from None
        if done.returncode != 0:
            message = (done.stderr or done.stdout).strip().splitlines()
            raise SlurmError(f"{' '.join(argv[:2])} failed (exit {done.returncode}): "
                             f"{message[-1] if message else 'no output'}")
        return done.stdout

    def sbatch(self, script: str, options: list[str]) -> str:
        try:
            out = self.run(["sbatch", "--parsable", *options], stdin=script).strip()
        except SlurmError as exc:
            if any(text.lower() in str(exc).lower() for text in _NEVER):
                raise SlurmUnsatisfiable(f"{exc} (options: {' '.join(options)})") from None
            raise
        job_id = out.split(";")[0]
        if not job_id.isdigit():
            raise SlurmError(f"sbatch answered {out!r}, not a job id")
        return job_id

    def scancel(self, job_ids: list[str]) -> None:
        if job_ids:
            self.run(["scancel", *job_ids])

    def jobs(self, job_ids: list[str]) -> dict[str, tuple[str, str, str]]:
        """job id -> (state, node list, reason) for the jobs Slurm still lists."""
        if not job_ids:
            return {}
        out = self.run(["squeue", "--noheader", "--states=all", f"--jobs={','.join(job_ids)}",
                        "--format=%i|%T|%N|%r"]) if job_ids else ""
        found = {}
        for line in out.splitlines():
            parts = line.strip().split("|")
            if len(parts) == 4:
                found[parts[0]] = (parts[1], parts[2], parts[3])
        return found

    def set_excluded(self, job_id: str, nodes: list[str]) -> None:
        """Change a pending job's excluded nodes."""
        self.run(["scontrol", "update", f"JobId={job_id}", f"ExcNodeList={','.join(nodes)}"])

    def job_state(self, job_id: str) -> tuple[str, str]:
        """(state, node) of a job squeue no longer lists, from the controller's memory
        (``scontrol show job``); ("GONE", "") when it forgot it too."""
        try:
            out = self.run(["scontrol", "--oneliner", "show", "job", job_id])
        except SlurmError:
            return "GONE", ""
        fields = dict(item.split("=", 1) for item in out.split() if "=" in item)
        return fields.get("JobState", "GONE"), fields.get("NodeList", "")

    def node_states(self) -> dict[str, str]:
        """node -> its state (lower case, flags such as '*' for not responding kept)."""
        out = self.run(["sinfo", "--noheader", "--Node", "--format=%N|%t"])
        states = {}
        for line in out.splitlines():
            parts = line.strip().split("|")
            if len(parts) == 2:
                states[parts[0]] = parts[1].lower()
        return states


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

    def __init__(self, spec: LaunchSpec, *, state: Any, packing: PackingPlan | None = None,
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
        if self.packing is None:
            return []
        return list(range(0, max((c.id for c in self.packing.containers), default=0) + 1))

    def launch(self) -> list[int]:
        """Submit one job per container, then watch them."""
        if self.packing is None:
            stored = self.state.get("packingplans", self.spec.topology_name)
            if stored is None:
                raise SlurmError(f"no packing plan for {self.spec.topology_name}")
            self.packing = PackingPlan.from_proto(stored)
        submitted: list[str] = []
        try:
            for c in self.containers:
                submitted.append(self._submit(c, "launch").job_id)
        except SlurmError:
            # nothing half-queued: what was submitted before the failure goes too
            self._cancel_quietly(submitted)
            raise
        self.write_status()
        self._monitor = threading.Thread(target=self._watch, name="slurm-monitor", daemon=True)
        self._monitor.start()
        return self.containers

    def restart(self, container: int = -1) -> None:
        targets = self.containers if container == -1 else [container]
        for c in targets:
            if c not in self.containers:
                raise ValueError(f"no container {c} in {self.spec.topology_name}; containers "
                                 f"are 0..{self.containers[-1]} (-1 for all)")
        with self._lock:
            for c in targets:
                self._replace(c, "restart requested")

    def update(self, proposed: PackingPlan) -> tuple[list[int], list[int]]:
        with self._lock:
            before = set(self.containers)
            self.packing = proposed
            after = set(self.containers)
            added, removed = sorted(after - before), sorted(before - after, reverse=True)
            for c in removed:
                self.due.pop(c, None)
                job = self.jobs.pop(c, None)
                if job is not None:
                    self._record(c, job.job_id, "removed", "heron update")
                    self._cancel_quietly([job.job_id])
            for c in added:
                self._submit(c, "added by heron update")
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
        deadline = time.monotonic() + 30
        while ids and time.monotonic() < deadline:
            try:
                live = {j for j, (state, _, _) in self.commands.jobs(ids).items()
                        if state not in ENDED_JOB_STATES}
            except SlurmError:
                break
            if not live:
                break
            time.sleep(0.5)

    # kill(): KillOnce's (stop, clean the state, then _after_kill), as every scheduler
    def _after_kill(self) -> None:
        """The uploaded package goes with the topology."""
        delete_package(self.spec)

    def close(self) -> None:
        self._stop.set()

    # -- jobs -----------------------------------------------------------------------------
    def _resources(self, container: int) -> tuple[int, int]:
        """(CPUs, MiB) for a container's job: what its packing plan asks, container 0 the
        Topology Master's own (1 CPU, 1 GiB), never below the configured minimums."""
        cpus, mem_mb = 1, 1024
        if self.packing is not None:
            for plan in self.packing.containers:
                if plan.id == container:
                    resource = plan.required
                    cpus = max(1, math.ceil(resource.cpu))
                    mem_mb = max(256, math.ceil(resource.ram / (1 << 20)))
        cpus = max(cpus, int(self.config.get("heron.slurm.container.cpus", 1)))
        mem_mb = max(mem_mb, int(self.config.get("heron.slurm.container.memory.mb", 0)))
        return cpus, mem_mb

    def job_script(self, container: int, incarnation: int) -> str:
        """The batch script of one container's job. The ZooKeeper digest travels inside
        it (Slurm keeps a batch script readable by its owner and Slurm's administrators
        only) and is written owner-only on the node: never on a command line, never in the
        job's environment, never in the package."""
        spec = self.spec
        python = str(self.config.get("heron.slurm.python") or sys.executable)
        work_root = self.config.get("heron.slurm.work.root")
        argv = [python, "-m", "engine.executor.remote", "--topology", spec.topology_name,
                "--topology-id", spec.topology_id, "--container", str(container),
                "--package", spec.package_url, "--sha256", spec.package_sha256,
                "--zk", spec.state.zk_hosts or "", "--zk-root", spec.state.zk_root,
                "--incarnation", str(incarnation)]
        digest = None
        if spec.state.zk_auth_file:
            digest = read_digest_file(spec.state.zk_auth_file)
            argv += ["--zk-auth-file", "$HERON_JOB_DIR/zk-auth"]
        if self.config.get("heron.network.bind.interface"):
            argv += ["--bind-interface", str(self.config["heron.network.bind.interface"])]
        if work_root:
            argv += ["--work-root", str(work_root)]
        log_dir = f"{work_root or '${TMPDIR:-/tmp}'}/heron-$(id -u)/{spec.topology_id}"
        code_root = with_code_root({})["PYTHONPATH"]  # this engine, installed or not
        # the job's own output (what the bootstrap says, then the executor's log) stays on
        # the node, in the container's logs folder, which its shell serves (heron logs)
        container_logs = f"{log_dir}/container-{container}/logs"
        quoted = " ".join('"$HERON_JOB_DIR/zk-auth"' if a == "$HERON_JOB_DIR/zk-auth"
                          else shlex.quote(a) for a in argv)
        lines = ["#!/bin/sh", "umask 077",
                 f"mkdir -p \"{log_dir}\" && chmod 700 \"{log_dir}\" || exit 1",
                 f"HERON_JOB_DIR=\"{log_dir}/job-$SLURM_JOB_ID\"",
                 'mkdir -p "$HERON_JOB_DIR" || exit 1',
                 f"mkdir -p \"{container_logs}\" || exit 1"]
        if digest is not None:
            lines += ['cat > "$HERON_JOB_DIR/zk-auth" <<\'HERON_DIGEST_END\'', digest,
                      "HERON_DIGEST_END"]
        lines += [f"export PYTHONPATH=\"${{PYTHONPATH:+$PYTHONPATH:}}{code_root}\"",
                  f"exec {quoted} >> \"{container_logs}/executor-{container}.log\" 2>&1",
                  ""]
        return "\n".join(lines)

    def _submit(self, container: int, reason: str) -> ContainerJob:
        with self._lock:
            incarnation = self._incarnations.get(container, 0) + 1
            self._incarnations[container] = incarnation
            cpus, mem_mb = self._resources(container)
            options = [f"--job-name=heron-{self.spec.topology_name}-{container}",
                       "--nodes=1", "--ntasks=1", f"--cpus-per-task={cpus}", f"--mem={mem_mb}M",
                       "--output=/dev/null", "--no-requeue", "--kill-on-invalid-dep=yes"]
            limit = self.config.get("heron.slurm.job.time.limit")
            if limit not in (None, "", "0", 0, "unlimited"):
                options.append(f"--time={limit}")
            if self.config.get("heron.slurm.partition"):
                options.append(f"--partition={self.config['heron.slurm.partition']}")
            if self.excluded:
                options.append(f"--exclude={','.join(sorted(self.excluded))}")
            job_id = self.commands.sbatch(self.job_script(container, incarnation), options)
            job = ContainerJob(container, job_id, incarnation, time.time(),
                               excluded=sorted(self.excluded))
            self.jobs[container] = job
            self._record(container, job_id, "submitted", reason,
                         incarnation=incarnation, excluded=sorted(self.excluded))
            return job

    def _replace(self, container: int, reason: str) -> None:
        old = self.jobs.get(container)
        if old is not None:
            self._cancel_quietly([old.job_id])
        self._submit(container, reason)

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
            self.excluded = unhealthy
            listed = self.commands.jobs([j.job_id for j in self.jobs.values()])
            for c, job in sorted(self.jobs.items()):
                state, node, reason = listed.get(job.job_id, ("", "", ""))
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
                    detail = f"{state} on {job.node or '?'}"
                    self._record(c, job.job_id, "ended", detail, ran=ran)
                    # a job that never ran, or ran briefly, backs off like any process
                    delay = tracker.failed(f"job {job.job_id} {detail}",
                                           progressed=state in ("NODE_FAIL", "PREEMPTED",
                                                                "TIMEOUT"))
                    self.due[c] = (time.monotonic() + delay, f"job {job.job_id} ended {state}")
                elif state in ("RUNNING", "COMPLETING", "CONFIGURING") and job.node in unhealthy:
                    self._record(c, job.job_id, "node lost",
                                 f"{job.node} is {nodes.get(job.node, '?')}")
                    self._replace(c, f"node {job.node} is {nodes.get(job.node, '?')}")
                elif state == "PENDING" and set(job.excluded) - self.excluded:
                    # it excludes a node that is healthy again: let it go there too
                    self.commands.set_excluded(job.job_id, sorted(self.excluded))
                    self._record(c, job.job_id, "exclusions updated",
                                 ",".join(sorted(self.excluded)) or "none")
                    job.excluded = sorted(self.excluded)
            now = time.monotonic()
            for c, (at, why) in sorted(self.due.items()):
                if at <= now and c in self.containers:
                    del self.due[c]
                    self._submit(c, why)

    def recovery_times(self) -> list[dict[str, Any]]:
        """For each replacement: how long from the loss being noticed to the new job
        running (what ``heron list`` shows)."""
        out = []
        pending: dict[int, SchedulerEvent] = {}
        for event in self.events:
            if event.what in ("node lost", "ended"):
                pending.setdefault(event.container, event)
            elif event.what == "running" and event.container in pending:
                lost = pending.pop(event.container)
                out.append({"container": event.container, "cause": lost.detail,
                            "seconds": round(event.time - lost.time, 2)})
        return out
