"""``SlurmCluster``: a real, throw-away Slurm cluster of several nodes on this machine
(see the package's docstring, tests/slurm/__init__.py, for what it builds and why).

This module holds what tests use: the layout, ``start``/``stop``, the Slurm clients
(``run``, ``sbatch``, ``job``, waiting for states) and the leftovers check. How each
piece is built is in ``tests.slurm.daemons``; commands on a node and its failures are in
``tests.slurm.nodes``.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, MutableSet, Sequence
from pathlib import Path

from tests.slurm.daemons import ClusterDaemons
from tests.slurm.host import (
    RUN_ROOT,
    SlurmClusterError,
    SlurmUnavailable,
    ip,
    missing_requirements,
    software_under_tmp,
)
from tests.slurm.leftovers import remove_stale_runs, run_leftovers
from tests.slurm.namespaces import (
    Node,
    delete_routing_rules,
    kill_all,
    pids_in_netns,
    pids_with_cmdline,
)
from tests.slurm.nodes import NodeControl


class SlurmCluster(ClusterDaemons, NodeControl):
    """A Slurm cluster of ``nodes`` nodes, each in its own network namespace on a bridge.

    ``env()`` is the environment for the Slurm clients (``SLURM_CONF``); ``run()`` runs
    one with a timeout. ``host_address`` is the host's address on the bridge (the
    controller listens there; give it to ZooKeeper); ``node_address(name)`` a node's.
    ``shared_dir`` is the uploader's directory, the same on the host and every node;
    ``local_dir`` (``/tmp``) is where each node has its private tmpfs (read a node's copy
    through ``node_path``; run commands there with ``node_run``). Break nodes with
    ``kill_node``/``partition`` and mend them with ``return_to_service`` (or
    ``restart_node``/``heal`` and ``resume``). ``service_pids``, when given (the suite's
    SESSION_SERVICE_PIDS), holds the pid of every daemon while it runs, so the suite's
    orphan-process check ignores them. ``software_paths`` are host directories under
    ``/tmp`` that every node sees at the same path (by default the checkout and the
    interpreter when they are there), as software installed on every node.
    """

    def __init__(self, nodes: int = 3, *, cpus_per_node: int = 4,
                 real_memory_mb: int = 2048, slurmd_timeout: int = 10,
                 message_timeout: int = 5,
                 kill_wait: int = 2, cred_expire: int = 10, local_size: str = "512m",
                 start_timeout: float = 60.0,
                 service_pids: MutableSet[int] | None = None,
                 software_paths: Sequence[Path] | None = None) -> None:
        if not 1 <= nodes <= 200:
            raise ValueError("nodes must be between 1 and 200")
        self.cpus_per_node = cpus_per_node
        self.real_memory_mb = real_memory_mb
        self.slurmd_timeout = slurmd_timeout
        self.message_timeout = message_timeout
        self.kill_wait = kill_wait
        self.cred_expire = cred_expire
        self.local_size = local_size
        self.start_timeout = start_timeout
        self.service_pids = service_pids
        #: host directories under /tmp every node sees at the same path (a checkout or
        #: virtualenv there); by default what this process runs from (software_under_tmp)
        self.software_paths = list(software_under_tmp() if software_paths is None
                                   else software_paths)
        self.run_id = secrets.token_hex(3)
        self.bridge = f"hb{self.run_id}"
        self.subnet: int | None = None
        self.nodes: dict[str, Node] = {}
        self._node_count = nodes
        self.base: Path | None = None
        self.ctld_port: int | None = None
        self.munged: subprocess.Popen | None = None
        self.slurmctld: subprocess.Popen | None = None
        self._lock_fd: int | None = None
        self._atexit_registered = False
        self.start_seconds: float | None = None

    # ---------------------------------------------------------------- layout

    def _path(self, *parts: str) -> Path:
        if self.base is None:
            raise RuntimeError("SlurmCluster is not started")
        return self.base.joinpath(*parts)

    @property
    def conf_path(self) -> Path:
        return self._path("slurm.conf")

    @property
    def munge_socket(self) -> Path:
        return self._path("munge", "run", "munge.socket")

    @property
    def log_dir(self) -> Path:
        return self._path("log")

    @property
    def shared_dir(self) -> Path:
        """The uploader's directory: the same files at the same path on every node."""
        return self._path("shared")

    @property
    def local_dir(self) -> Path:
        """Each node's private scratch space, ``/tmp``: a tmpfs of its own on every node
        (jobs' working directories and logs, ipc sockets), not the host's /tmp."""
        return Path("/tmp")

    @property
    def _node_root(self) -> Path:
        """Where each node mounts its tmpfs (its /tmp and slurmd's spool live there);
        an empty directory from the host."""
        return self._path("node")

    @property
    def host_address(self) -> str:
        """The host's address on the bridge: reachable from every node."""
        if self.subnet is None:
            raise RuntimeError("SlurmCluster is not started")
        return f"10.213.{self.subnet}.1"

    @property
    def node_names(self) -> list[str]:
        return list(self.nodes)

    def node_address(self, name: str) -> str:
        return self._node(name).address

    def netns_name(self, name: str) -> str:
        return self._node(name).netns

    def _node(self, name: str) -> Node:
        try:
            return self.nodes[name]
        except KeyError:
            raise KeyError(f"no node {name!r}; nodes: {', '.join(self.nodes)}") from None

    def env(self) -> dict[str, str]:
        """The environment for sbatch/squeue/scancel/scontrol/sinfo/srun."""
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf_path)
        for key in [k for k in env if k.startswith(("SLURM_", "SBATCH_", "SRUN_",
                                                     "SQUEUE_", "SINFO_"))]:
            if key != "SLURM_CONF":
                del env[key]
        return env

    # --------------------------------------------------------------- start

    def start(self) -> SlurmCluster:
        """Build the cluster and wait until every node is idle (``start_timeout``);
        on failure, stop what was started and raise with the daemons' log tails."""
        why = missing_requirements()
        if why:
            raise SlurmUnavailable(why)
        if self.base is not None:
            raise RuntimeError("SlurmCluster already started")
        began = time.monotonic()
        try:
            self._take_lock()
            if not self._atexit_registered:
                atexit.register(self.stop)
                self._atexit_registered = True
            remove_stale_runs()
            self._make_base()
            self._start_munged()
            self._make_network()
            self._write_conf()
            self._write_name_files()
            self._start_slurmctld()
            for node in self.nodes.values():
                self._start_slurmd(node)
            self.wait_nodes_state(self.node_names, "IDLE",
                                  timeout=max(1.0, self.start_timeout
                                              - (time.monotonic() - began)))
        except BaseException as exc:
            report = self.diagnostics()
            self.stop()
            if isinstance(exc, (SlurmClusterError, SlurmUnavailable)):
                raise SlurmClusterError(f"{exc}\n{report}") from exc
            raise
        self.start_seconds = time.monotonic() - began
        return self

    # --------------------------------------------------------------- clients

    def run(self, *argv: str, timeout: float = 30.0, check: bool = True
            ) -> subprocess.CompletedProcess:
        """Run a Slurm client command (``run("squeue", "-h")``) against this cluster."""
        try:
            done = subprocess.run(list(argv), capture_output=True, text=True,
                                  env=self.env(), timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise SlurmClusterError(f"{' '.join(argv)} took more than {timeout:g}s"
                                    ) from exc
        if check and done.returncode != 0:
            raise SlurmClusterError(f"{' '.join(argv)} exited with {done.returncode}: "
                                    f"{(done.stderr or done.stdout).strip()}")
        return done

    def sbatch(self, *args: str, script: str | None = None, timeout: float = 30.0) -> int:
        """Submit a batch job (``sbatch --parsable ARGS``, the script on stdin when given)
        and return its job id."""
        try:
            done = subprocess.run(["sbatch", "--parsable", *args],
                                  input=script if script is not None else "",
                                  capture_output=True, text=True, env=self.env(),
                                  timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise SlurmClusterError(f"sbatch took more than {timeout:g}s") from exc
        if done.returncode != 0:
            raise SlurmClusterError(f"sbatch {' '.join(args)} exited with "
                                    f"{done.returncode}: {done.stderr.strip()}")
        return int(done.stdout.strip().split(";")[0])

    @staticmethod
    def _fields(line: str) -> dict[str, str]:
        fields = {}
        for token in line.split():
            key, sep, value = token.partition("=")
            if sep:
                fields[key] = value
        return fields

    def job(self, job_id: int) -> dict[str, str]:
        """``scontrol show job`` as a dict (JobState, NodeList, Reason, Restarts...);
        empty once Slurm forgot the job (MinJobAge after it ended)."""
        done = self.run("scontrol", "show", "job", "--oneliner", str(job_id), check=False)
        if done.returncode != 0:
            return {}
        return self._fields(done.stdout)

    def nodes_info(self) -> dict[str, dict[str, str]]:
        """``scontrol show nodes`` per node name (State is e.g. IDLE, ALLOCATED,
        DOWN+NOT_RESPONDING, IDLE+DRAIN)."""
        done = self.run("scontrol", "show", "nodes", "--oneliner")
        info = {}
        for line in done.stdout.splitlines():
            fields = self._fields(line)
            if "NodeName" in fields:
                info[fields["NodeName"]] = fields
        return info

    def node_state(self, name: str) -> str:
        return self.nodes_info().get(name, {}).get("State", "")

    def wait_nodes_state(self, names: Iterable[str], state: str, *, timeout: float,
                         exact: bool = True) -> float:
        """Wait until every node in ``names`` is in ``state`` (``exact``: the whole state
        string, e.g. IDLE; else one of its '+' parts, e.g. DOWN or NOT_RESPONDING);
        return the seconds it took, raise SlurmClusterError with the states otherwise."""
        names = list(names)
        began = time.monotonic()
        deadline = began + timeout
        states: dict[str, str] = {}
        while True:
            try:
                info = self.nodes_info()
                states = {n: info.get(n, {}).get("State", "?") for n in names}
            except SlurmClusterError as exc:
                states = {n: f"? ({exc})" for n in names}
            if all((s == state) if exact else (state in s.split("+"))
                   for s in states.values()):
                return time.monotonic() - began
            self._check_daemons()
            if time.monotonic() >= deadline:
                raise SlurmClusterError(
                    f"nodes not {state} after {timeout:g}s: "
                    + ", ".join(f"{n}={s}" for n, s in states.items()))
            time.sleep(0.2)

    def wait_job(self, job_id: int, predicate, *, timeout: float) -> dict[str, str]:
        """Poll ``job(job_id)`` until ``predicate(fields)`` is true; return the fields."""
        deadline = time.monotonic() + timeout
        fields: dict[str, str] = {}
        while True:
            fields = self.job(job_id)
            if predicate(fields):
                return fields
            if time.monotonic() >= deadline:
                raise SlurmClusterError(
                    f"job {job_id} not as expected after {timeout:g}s: "
                    + " ".join(f"{k}={fields.get(k)}" for k in
                               ("JobState", "Reason", "NodeList", "Restarts")))
            time.sleep(0.2)

    def _check_daemons(self) -> None:
        for what, proc in (("munged", self.munged), ("slurmctld", self.slurmctld)):
            if proc is not None and proc.poll() is not None:
                raise SlurmClusterError(f"{what} exited with {proc.returncode}")

    # --------------------------------------------------------------- stop

    def diagnostics(self, lines: int = 25) -> str:
        """The end of every daemon's log, for failure messages."""
        if self.base is None or not self.log_dir.is_dir():
            return ""
        parts = []
        for log in sorted(self.log_dir.iterdir()):
            twin = log.with_suffix(".log")
            if log.suffix == ".out" and twin.exists() and twin.stat().st_size:
                continue  # the daemon's own log has the same lines
            try:
                tail = log.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            if tail:
                parts.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(parts)

    def stop(self) -> None:
        """Kill every daemon and every process in the nodes' namespaces, delete the
        namespaces, veths and bridge, remove the base directory and the lock. Safe to
        call twice, and after a start that failed half-way."""
        for node in self.nodes.values():
            if node.netns_id is not None:
                kill_all(lambda node=node: pids_in_netns(node.netns_id))
            self._reap(node)
        for proc in (self.slurmctld, self.munged):
            if proc is None:
                continue
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
            if self.service_pids is not None:
                self.service_pids.discard(proc.pid)
        self.slurmctld = self.munged = None
        if self.base is not None:
            # Anything else that still names this run's files (a client command).
            kill_all(lambda: pids_with_cmdline(str(self.base)))
        for node in self.nodes.values():
            if os.path.exists(f"/run/netns/{node.netns}"):
                ip("netns", "delete", node.netns, check=False)
            if os.path.exists(f"/sys/class/net/{node.veth}"):
                ip("link", "delete", node.veth, check=False)
        if os.path.exists(f"/sys/class/net/{self.bridge}"):
            ip("link", "delete", self.bridge, check=False)
        delete_routing_rules(self.run_id)
        if self.base is not None:
            shutil.rmtree(self.base, ignore_errors=True)
            self.base = None
        if self._lock_fd is not None:
            try:
                (RUN_ROOT / f"{self.run_id}.lock").unlink()
            except FileNotFoundError:
                pass
            os.close(self._lock_fd)
            self._lock_fd = None

    def leftovers(self) -> list[str]:
        """What of this run still exists after stop() (empty when teardown was clean)."""
        return run_leftovers(self.run_id, [n.netns_id for n in self.nodes.values()
                                           if n.netns_id is not None])

    def __enter__(self) -> SlurmCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
