"""What every process of a running topology needs to know, in one file.

``heron submit`` (or ``heron run --engine heron``) writes ``launch.json`` into the
topology's working directory; the scheduler, executors, Topology Master, Stream
Managers, Metrics Managers and instances are all started with ``--launch PATH`` and read
it. Instances rebuild the topology from the recorded submission (project, topology
file, environment, options) exactly as the submitter did, so the classes they run are
the ones the plan was compiled from; the Topology Master checks the plans match.
A Flux submission records the YAML file as its project and the substitution values and
working directory it was read with, so a process rebuilds the same topology without the
``--filter`` file or the submitting shell's environment.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine.common.process.restart_policy import RestartPolicy
from engine.common.security.private import private_dir
from engine.statemgr import open_state_manager

LAUNCH_FILE = "launch.json"


@dataclass
class StateManagerSpec:
    kind: str = "local"  # "local" | "zookeeper"
    root: str | None = None  # local: directory of the tree
    zk_hosts: str | None = None
    zk_root: str = "/heron"
    #: an owner-only file holding the ZooKeeper digest ``user:password`` (never the
    #: digest itself: launch.json is not a secret); a submission's copy lives in
    #: ``<working dir>/secrets/zk-auth``
    zk_auth_file: str | None = None

    def open(self) -> Any:
        return open_state_manager(self.kind, root=self.root, zk_hosts=self.zk_hosts,
                                  zk_root=self.zk_root, zk_auth_file=self.zk_auth_file)

    def describe(self) -> str:
        if self.kind == "zookeeper":
            return f"zookeeper {self.zk_hosts}{self.zk_root}"
        return f"local {self.root}"


@dataclass
class Submission:
    """How to rebuild the topology: the arguments of engine.common.submission.load_topology."""

    project: str
    name: str
    env: str | None = None
    config_file: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    ackers: int | None = None
    workers: int | None = None
    debug: bool = False
    #: a Flux file's ``${...}`` values as the submitter resolved them (placeholder ->
    #: text; None for a streamparse project), used instead of ``--filter`` and the
    #: environment when the topology is rebuilt
    flux_values: dict[str, str] | None = None
    #: the directory a Flux file's relative includes were looked up in first
    flux_cwd: str | None = None

    @classmethod
    def of(cls, project: Path | str, name: str, *, env: str | None,
           config_file: Path | str | None, options: dict[str, Any], ackers: int | None,
           workers: int | None, debug: bool = False, flux: Any = None) -> Submission:
        """What the command line gave, with the project and config file made absolute
        (the processes that rebuild the topology start elsewhere); ``flux``, the loaded
        topology's FluxTopology, adds what rebuilding a Flux file needs."""
        return cls(project=str(Path(project).resolve()), name=name, env=env,
                   config_file=str(Path(config_file).resolve()) if config_file else None,
                   options=options, ackers=ackers, workers=workers, debug=debug,
                   flux_values=dict(flux.values) if flux is not None else None,
                   flux_cwd=str(flux.cwd) if flux is not None and flux.cwd else None)

    def load(self) -> Any:
        """The compiled topology, rebuilt from this submission (engine.common.submission): the one
        way every process and the submitter rebuild it, a Flux file's values included.

        Imported here, not at the top: only instances and the submitter rebuild the
        topology, and the compiler, the Flux reader and the project loader behind it
        would otherwise cost every Stream Manager, Metrics Manager, Topology Master and
        executor about 0.2 s of start-up."""
        from engine.common.submission import load_topology

        return load_topology(self.project, name=self.name, env=self.env,
                             config_file=self.config_file, cli_options=self.options,
                             ackers=self.ackers, workers=self.workers, debug=self.debug,
                             flux_values=self.flux_values, flux_cwd=self.flux_cwd)


@dataclass
class LaunchSpec:
    topology_name: str
    topology_id: str
    working_dir: str
    submission: Submission
    state: StateManagerSpec = field(default_factory=StateManagerSpec)
    cluster: str = "local"
    python: str = sys.executable
    #: run Python components that have a shell spec as multi-lang subprocesses
    multilang: bool = False
    multilang_serializer: str = "json"
    #: where components with shell commands start (a project's src/)
    shell_cwd: str | None = None
    #: keep every tuple of leaf streams (``heron run --capture``), not just the summary
    capture_all: bool = False
    #: capture every stream, consumed or not (conformance), instead of leaf streams only
    capture_all_streams: bool = False
    #: restart policy of the executors and the scheduler (engine.common.process.restart_policy),
    #: from the topology's ``heron.executor.restart.backoff.*`` keys: first wait after an
    #: exit with no progress, its cap, and the running time that counts as progress
    restart_backoff_initial_ms: int = 1000
    restart_backoff_max_ms: int = 30000
    restart_reset_secs: float = 60.0
    #: the address this container's TCP sockets bind and publish: loopback on one
    #: machine, the node's address on a cluster (chosen by the scheduler)
    bind_host: str = "127.0.0.1"
    #: which start of its container this is (the scheduler counts them): the Topology
    #: Master refuses a Stream Manager of an older incarnation, so a container that was
    #: replaced while cut off never rejoins
    incarnation: int = 0
    #: the cluster's scheduler and its keys (engine.common.cluster.config), for the service
    scheduler: str = "local"
    scheduler_config: dict[str, Any] = field(default_factory=dict)
    #: where nodes fetch the topology package, and its SHA-256 (remote clusters)
    package_url: str | None = None
    package_sha256: str | None = None

    @property
    def restart_policy(self) -> RestartPolicy:
        return RestartPolicy(initial_ms=self.restart_backoff_initial_ms,
                             max_ms=self.restart_backoff_max_ms,
                             reset_after_secs=self.restart_reset_secs)

    def set_restart_policy(self, policy: RestartPolicy) -> None:
        self.restart_backoff_initial_ms = policy.initial_ms
        self.restart_backoff_max_ms = policy.max_ms
        self.restart_reset_secs = policy.reset_after_secs

    # -- paths -------------------------------------------------------------------------
    @property
    def home(self) -> Path:
        return Path(self.working_dir)

    @property
    def log_dir(self) -> Path:
        return self.home / "logs"

    @property
    def capture_dir(self) -> Path:
        return self.home / "capture"

    @property
    def pid_dir(self) -> Path:
        return self.home / "pids"

    @property
    def restarts_dir(self) -> Path:
        """Restart status files, one per supervised process (engine.common.process.supervisor)."""
        return self.home / "restarts"

    @property
    def path(self) -> Path:
        return self.home / LAUNCH_FILE

    @property
    def superseded_marker(self) -> Path:
        """Written by a Stream Manager the Topology Master refused because its container
        was started again elsewhere: the executor then stops the container for good."""
        return self.home / "superseded"

    def process_log(self, process_name: str) -> Path:
        return self.log_dir / f"{process_name}.log"

    # -- persistence -------------------------------------------------------------------
    def save(self) -> Path:
        """Write launch.json atomically (readers never see half a file)."""
        for d in (self.home, self.log_dir, self.capture_dir, self.pid_dir):
            private_dir(d)  # owner-only (docs/security.md)
        fd, tmp = tempfile.mkstemp(dir=self.home, prefix=".launch.")
        with os.fdopen(fd, "w") as fh:
            json.dump(asdict(self), fh, indent=2, sort_keys=True)
        os.replace(tmp, self.path)
        return self.path

    @classmethod
    def load(cls, path: Path | str) -> LaunchSpec:
        path = Path(path)
        if path.is_dir():
            path = path / LAUNCH_FILE
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise LaunchError(f"{path}: cannot read the launch file: {exc}") from None
        try:
            data["submission"] = Submission(**data["submission"])
            data["state"] = StateManagerSpec(**data["state"])
            return cls(**data)
        except (KeyError, TypeError) as exc:
            raise LaunchError(f"{path}: not a launch file of this version: {exc}") from None

    def load_topology(self) -> Any:
        """The compiled topology, rebuilt from the submission (engine.common.submission)."""
        return self.submission.load()


class LaunchError(Exception):
    """The launch file is missing or unreadable; the text names it."""


# -- process names (Heron's executor names) ----------------------------------------------
TMANAGER = "heron-tmanager"


def stmgr_id(container: int) -> str:
    return f"stmgr-{container}"


#: opens the Topology Master's refusal of a Stream Manager whose container was replaced
SUPERSEDED = "superseded"


def peer_identity(process_id: str, incarnation: int) -> str:
    """The zmq identity a process uses toward the Topology Master: its id, plus its
    container's incarnation when the scheduler counts them. Two incarnations of one
    container (the old one cut off by a partition, the new one started elsewhere) never
    share an identity, so neither can take over the other's connection."""
    return process_id if not incarnation else f"{process_id}.i{incarnation}"


def split_peer_identity(identity: bytes | str) -> tuple[str, int]:
    """(process id, incarnation) of a :func:`peer_identity`."""
    text = identity.decode(errors="replace") if isinstance(identity, bytes) else identity
    head, sep, tail = text.rpartition(".i")
    if sep and tail.isdigit():
        return head, int(tail)
    return text, 0


def metricsmgr_id(container: int) -> str:
    return f"metricsmgr-{container}"


def instance_id(container: int, component: str, task: int) -> str:
    return f"container_{container}_{component}_{task}"


def executor_name(container: int) -> str:
    return f"executor-{container}"


def local_socket_name(container: int, *, spout: bool) -> str:
    """The ipc socket name instances of a container connect to. Spouts get their own, so
    a Stream Manager under pressure can stop reading from its spouts alone."""
    return f"{'p' if spout else 's'}{container}"


def metrics_socket_name(container: int) -> str:
    return f"m{container}"
