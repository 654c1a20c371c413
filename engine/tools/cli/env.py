"""What every ``heron`` topology command shares: where topologies live (:class:`Env`, from
the common options), the one-line errors (:class:`CommandError`, :class:`BadInput`), the
topology's keys for talking to its processes, and a request to its Topology Master.

Kept apart from the commands so that every command module imports it and none imports
another command module.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import click
from google.protobuf.message import Message

from engine.common.cluster.config import ClusterRef, load_cluster
from engine.common.security.private import private_dir, write_private_file
from engine.messages import common_pb2, tmanager_pb2, topology_pb2
from engine.statemgr.zookeeper import DigestFileError, read_digest_file
from engine.submitter.errors import SubmitterError
from engine.tools.cli import errors as cli_errors

if TYPE_CHECKING:  # types only: deferred at run time for the CLI's start-up time
    from engine.common.launch import StateManagerSpec
    from engine.common.security.guard import SocketSecurity
    from engine.spi.statemgr import StateManager

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_HOME = "~/.heron"
#: how long a request to the Topology Master may take
TM_TIMEOUT_SECS = 10.0


class CommandError(Exception):
    """A failure the CLI reports in one line with ``code`` as the exit status."""

    code = 1


class BadInput(CommandError):
    code = 2


# -- common options -------------------------------------------------------------------------
@dataclass
class Env:
    """Where topologies and their state live, from the common options."""

    home: Path
    state_kind: str
    state_root: Path
    zk_hosts: str | None
    zk_root: str
    #: the owner-only file holding the ZooKeeper digest user:password (--zk-auth)
    zk_auth_file: Path | None = None

    def state_spec(self) -> StateManagerSpec:
        from engine.common.launch import StateManagerSpec  # deferred: CLI start-up time

        if self.state_kind == "zookeeper":
            return StateManagerSpec(kind="zookeeper", zk_hosts=self.zk_hosts, zk_root=self.zk_root,
                                    zk_auth_file=str(self.zk_auth_file) if self.zk_auth_file
                                    else None)
        return StateManagerSpec(kind="local", root=str(self.state_root))

    def launch_state_spec(self, working_dir: Path) -> StateManagerSpec:
        """The state spec a submission's processes get: the digest, if any, copied into
        ``working_dir/secrets/zk-auth`` (owner-only), so they never depend on the user's
        file staying where it is, and launch.json names a path, never the digest."""
        spec = self.state_spec()
        if spec.zk_auth_file:
            private_dir(working_dir)
            copy = working_dir / "secrets" / "zk-auth"
            write_private_file(copy, read_digest_file(spec.zk_auth_file).encode())
            spec.zk_auth_file = str(copy)
        return spec

    def open_state(self) -> StateManager:
        from engine.statemgr import StateError  # deferred: CLI start-up time

        spec = self.state_spec()
        if spec.kind == "zookeeper" and not spec.zk_hosts:
            raise BadInput("--state-manager zookeeper needs --zk HOST:PORT[,HOST:PORT...]")
        try:
            return spec.open()
        except StateError as exc:
            raise CommandError(f"state manager ({spec.describe()}): {exc}") from None

    def working_dir(self, name: str) -> Path:
        return self.home / "topologies" / name

    def on_cluster(self, cluster: str) -> Env:
        """This Env with the state manager of ``cluster`` (HOME/conf/CLUSTER/statemgr.yaml);
        ``local`` without a directory is this machine, unchanged."""
        config = load_cluster(self.home, ClusterRef.parse(cluster).cluster)
        if config.state_manager != "zookeeper":
            return self
        return Env(self.home, "zookeeper", self.state_root, config.zk_hosts, config.zk_root,
                   config.zk_auth_file)


def zk_auth_file(path: Path | None, state_kind: str) -> Path | None:
    """The checked ``--zk-auth`` file (or ``$HERON_ZK_AUTH_FILE``'s) for ``state_kind``:
    BadInput when it is missing or malformed or given with the local state manager on
    the command line (the variable is ignored there); UnsafePathError when it is a
    symlink, another user's or readable by others."""
    if path is None:
        return None
    if state_kind != "zookeeper":
        source = click.get_current_context().get_parameter_source("zk_auth")
        if source == click.core.ParameterSource.COMMANDLINE:
            raise BadInput("--zk-auth goes with the zookeeper state manager "
                           "(--state-manager zookeeper --zk HOST:PORT)")
        return None
    path = Path(os.path.abspath(path.expanduser()))  # not resolved: a symlink is refused
    try:
        read_digest_file(path)
    except DigestFileError as exc:
        raise BadInput(f"--zk-auth {exc}") from None
    return path


ZK_AUTH_HELP = ("An owner-only (0600) file holding the ZooKeeper digest user:password: the "
                "state's nodes get a digest ACL for it alone. Env: HERON_ZK_AUTH_FILE.")


def common_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--home, --state-root, --state-manager, --zk, --zk-root, --zk-auth, folded into
    ``env: Env``. The home is created owner-only, or refused (exit 2, naming it) when
    another user owns it or can write it."""

    @click.option("--home", envvar="HERON_HOME", default=DEFAULT_HOME, show_default=True,
                  type=click.Path(path_type=Path),
                  help="Where topology working dirs (and local state) live. Env: HERON_HOME.")
    @click.option("--state-root", type=click.Path(path_type=Path),
                  help="Local state tree (default: HOME/state).")
    @click.option("--state-manager", "state_kind", type=click.Choice(["local", "zookeeper"]),
                  default="local", show_default=True, help="Where topology state is kept.")
    @click.option("--zk", "zk_hosts", metavar="HOST:PORT[,...]", help="ZooKeeper ensemble.")
    @click.option("--zk-root", default="/heron", show_default=True,
                  help="ZooKeeper path of the state tree.")
    @click.option("--zk-auth", "zk_auth", metavar="FILE", envvar="HERON_ZK_AUTH_FILE",
                  type=click.Path(path_type=Path), help=ZK_AUTH_HELP)
    @click.option("--cluster", "cluster_name", metavar="CLUSTER", envvar="HERON_CLUSTER",
                  help="A cluster described in HOME/conf/CLUSTER/: its statemgr.yaml says "
                       "where its topologies' state is (instead of --state-manager/--zk). "
                       "Env: HERON_CLUSTER.")
    @functools.wraps(fn)
    def wrapper(*args: Any, home: Path, state_root: Path | None, state_kind: str,
                zk_hosts: str | None, zk_root: str, zk_auth: Path | None,
                cluster_name: str | None, **kwargs: Any) -> Any:
        def call() -> Any:
            resolved = private_dir(home.expanduser().resolve())
            env = Env(resolved, state_kind,
                      (state_root or resolved / "state").expanduser().resolve(), zk_hosts,
                      zk_root, zk_auth_file(zk_auth, state_kind))
            if cluster_name:
                env = env.on_cluster(cluster_name)
            return fn(*args, env=env, **kwargs)

        return run_reporting_errors(call)

    return wrapper


def run_reporting_errors(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    # deferred: CLI start-up time (every command module loads for `heron --help`)
    from engine.common.network.sockets import RequestTimeout
    from engine.packing import PackingError
    from engine.statemgr import StateError

    user_errors: tuple[type[BaseException], ...] = (*cli_errors.USER_ERRORS, PackingError)
    run_errors: tuple[type[BaseException], ...] = (*cli_errors.RUN_ERRORS, StateError,
                                                   RequestTimeout, OSError)
    try:
        return fn(*args, **kwargs)
    except (CommandError, SubmitterError) as exc:
        fail(str(exc), exc.code)
    except user_errors as exc:
        fail(cli_errors.one_line(exc), 2)
    except run_errors as exc:
        fail(cli_errors.one_line(exc), 1)


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"heron: error: {message}", err=True)
    sys.exit(code)


def require_topology(state: StateManager, name: str) -> topology_pb2.Topology:
    """The stored topology; BadInput naming the running ones when absent."""
    topology = state.get("topologies", name)
    if topology is None:
        running = state.topologies()
        listing = ", ".join(running) if running else "none"
        raise BadInput(f"no topology named {name!r} (running: {listing})")
    return topology


def topology_security(state: StateManager, name: str,
                      working_dir: Path | None = None) -> SocketSecurity:
    """The SocketSecurity the CLI needs to reach ``name``'s engine processes: every one
    of them refuses a client without the topology's keys (from the state manager, or
    from ``working_dir`` when the state manager cannot keep secrets)."""
    # deferred: CLI start-up time
    from engine.common.security.guard import SocketSecurity
    from engine.common.security.keys import KeysError, keys_from_state

    try:
        return SocketSecurity(keys_from_state(state, name, working_dir))
    except KeysError as exc:
        raise CommandError(str(exc)) from None


def ask_topology_master(env: Env, name: str,
                        build: Callable[[topology_pb2.Topology, tmanager_pb2.TManagerLocation],
                                        Message],
                        failing: str, timeout: float | None = None) -> Any:
    """Send the message ``build(stored topology, TM location)`` to the running Topology
    Master of ``name`` and return its answer. ``failing`` opens the CommandError raised
    when there is no Topology Master or it does not answer within ``timeout`` seconds
    (default TM_TIMEOUT_SECS) ("cannot activate 'x'")."""
    timeout = TM_TIMEOUT_SECS if timeout is None else timeout
    # deferred: CLI start-up time
    from engine.common.network import request
    from engine.common.network.sockets import RequestTimeout

    state = env.open_state()
    try:
        topology = require_topology(state, name)
        tm = state.get("tmanagers", name)
        security = topology_security(state, name, env.working_dir(name))
    finally:
        state.close()
    if tm is None or not tm.controller_endpoint:
        raise CommandError(f"{failing}: its Topology Master is not running "
                           f"(no tmanagers/{name} in {env.state_spec().describe()})")
    try:
        return request(tm.controller_endpoint, build(topology, tm), timeout=timeout,
                       security=security)
    except RequestTimeout:
        raise CommandError(f"{failing}: its Topology Master at {tm.controller_endpoint} did "
                           f"not answer within {timeout:g}s") from None


def set_active(env: Env, name: str, activate: bool) -> None:
    """``heron activate`` / ``heron deactivate``: ask the Topology Master, print its answer."""
    verb = "activate" if activate else "deactivate"
    cls = (tmanager_pb2.TopologyActivateRequest if activate
           else tmanager_pb2.TopologyDeactivateRequest)
    response = ask_topology_master(
        env, name, lambda topology, tm: cls(topology_name=name,
                                            topology_id=tm.topology_id or topology.id),
        f"cannot {verb} {name!r}")
    status = response.status.status
    if status == common_pb2.OK:
        click.echo(f"{verb}d topology {name!r}")
    elif status in (common_pb2.TOPOLOGY_ALREADY_ACTIVE, common_pb2.TOPOLOGY_ALREADY_DEACTIVE):
        click.echo(f"topology {name!r} is already {'active' if activate else 'deactivated'}")
    else:
        detail = response.status.message or common_pb2.StatusCode.Name(status)
        raise CommandError(f"cannot {verb} {name!r}: {detail}")
