"""``heron tracker``: the tracker's REST API (``engine.tools.tracker``) over the state manager
and the Topology Masters, and the page (``engine.tools.ui``) on the same port. Every request
needs the access token of the Heron home (``HOME/access-token``, made on first use); the
command prints the page's link with it, which sets the browser's cookie once."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from engine.common.security.private import private_dir
from engine.tools.cli import env as cli_env
from engine.tools.cli.env import ZK_AUTH_HELP

if TYPE_CHECKING:  # types only: deferred at run time for the CLI's start-up time
    from engine.common.launch import StateManagerSpec
from engine.tools.cli.serving import (
    DEFAULT_TRACKER_PORT,
    BadInput,
    CommandError,
    bind_socket,
    check_host,
    configure_logging,
    link,
    run_reporting_errors,
    serve,
    server_url,
)


# -- heron tracker ------------------------------------------------------------------------------
@click.command("tracker")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_TRACKER_PORT,
              show_default=True, help="Port to serve on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on; other than loopback needs --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow serving on a non-loopback address (plain HTTP: the access token "
                   "crosses the network in the clear).")
@click.option("--home", envvar="HERON_HOME", default="~/.heron", show_default=True,
              type=click.Path(path_type=Path),
              help="Where topology working dirs (and local state) live. Env: HERON_HOME.")
@click.option("--state-root", type=click.Path(path_type=Path),
              help="Local state tree (default: HOME/state).")
@click.option("--state-manager", "state_kind", type=click.Choice(["local", "zookeeper"]),
              help="Where topology state is kept [default: zookeeper with --zk, else local].")
@click.option("--zk", "zk_hosts", metavar="HOST:PORT[,...]", help="ZooKeeper ensemble.")
@click.option("--zk-root", default="/heron", show_default=True,
              help="ZooKeeper path of the state tree.")
@click.option("--zk-auth", "zk_auth", metavar="FILE", envvar="HERON_ZK_AUTH_FILE",
              type=click.Path(path_type=Path), help=ZK_AUTH_HELP)
@click.option("--cluster", "cluster_name", metavar="CLUSTER", envvar="HERON_CLUSTER",
              help="Track the topologies of a cluster described in HOME/conf/CLUSTER/ (its "
                   "statemgr.yaml), instead of --state-manager/--zk. Env: HERON_CLUSTER.")
@click.option("--poll-interval", type=click.FloatRange(0.2, 3600), default=5.0,
              show_default=True, help="Seconds between metric snapshots of each topology.")
@click.option("--history", "history_secs", type=click.FloatRange(10, 7 * 86400),
              default=3 * 3600.0, show_default=True,
              help="Seconds of metric snapshots kept (the longest window served).")
@click.option("--tm-timeout", type=click.FloatRange(0.1, 120), default=3.0, show_default=True,
              help="Seconds to wait for a Topology Master before answering 503.")
@click.option("--no-ui", is_flag=True, help="Serve the REST API only, not the web page.")
@click.option("--open", "open_name", metavar="NAME",
              help="Open the page of topology NAME in a browser once serving.")
def tracker_command(port: int, host: str, allow_remote: bool, home: Path,
                    state_root: Path | None, state_kind: str | None, zk_hosts: str | None,
                    zk_root: str, zk_auth: Path | None, cluster_name: str | None,
                    poll_interval: float, history_secs: float, tm_timeout: float, no_ui: bool,
                    open_name: str | None) -> None:
    """Serve the tracker's REST API (and the web page at /ui/) over the state manager and
    the Topology Masters. API docs: /docs and /openapi.json."""
    run_reporting_errors(_tracker, port=port, host=host, allow_remote=allow_remote, home=home,
         state_root=state_root, state_kind=state_kind, zk_hosts=zk_hosts, zk_root=zk_root,
         zk_auth=zk_auth, cluster_name=cluster_name, poll_interval=poll_interval,
         history_secs=history_secs, tm_timeout=tm_timeout, no_ui=no_ui, open_name=open_name)


def _tracker(*, port: int, host: str, allow_remote: bool, home: Path, state_root: Path | None,
             state_kind: str | None, zk_hosts: str | None, zk_root: str, zk_auth: Path | None,
             cluster_name: str | None, poll_interval: float, history_secs: float,
             tm_timeout: float, no_ui: bool, open_name: str | None) -> None:
    # deferred: CLI start-up time (every command module loads for `heron --help`)
    from engine.common.security.access_token import load_or_create
    from engine.statemgr import StateError
    from engine.tools.tracker import Tracker, TrackerSettings, create_app
    from engine.tools.ui.pages import topology_path

    check_host(host, allow_remote)
    home = private_dir(home.expanduser().resolve())
    if cluster_name:
        spec = _cluster_state_spec(home, cluster_name, state_kind, zk_hosts, state_root)
    else:
        spec = _state_spec(home, state_kind, zk_hosts, zk_root, zk_auth, state_root)
    if open_name and no_ui:
        raise BadInput("--open needs the page: drop --no-ui")
    token = load_or_create(home)
    settings = TrackerSettings(poll_interval=poll_interval, history_secs=history_secs,
                               tm_timeout=tm_timeout, home=home)
    tracker = Tracker(spec, settings)
    try:
        tracker.start(poll=False)  # a state manager that does not answer fails here, cleanly
    except StateError as exc:
        raise CommandError(f"state manager ({spec.describe()}): {exc}") from None
    sock = bind_socket(host, port)
    url = server_url(sock)
    configure_logging()
    click.echo(f"heron tracker serving on {url} (state: {spec.describe()})", err=True)
    # the link on stdout, apart from the log lines on stderr: the token is in no log
    click.echo(f"  open: {link(url, '/ui/' if not no_ui else '/docs', token)}")
    click.echo(f"  API: send 'Authorization: Bearer TOKEN', TOKEN in {home / 'access-token'}",
               err=True)
    try:
        serve(create_app(spec, settings, ui=not no_ui, tracker=tracker, token=token), sock,
              open_url=link(url, topology_path(open_name), token) if open_name else None)
    finally:
        tracker.stop()
        sock.close()


def _state_spec(home: Path, state_kind: str | None, zk_hosts: str | None, zk_root: str,
                zk_auth: Path | None, state_root: Path | None) -> StateManagerSpec:
    """The state manager the options name: ZooKeeper with --zk, else the local tree."""
    from engine.common.launch import StateManagerSpec  # deferred: CLI start-up time

    kind = state_kind or ("zookeeper" if zk_hosts else "local")
    try:
        auth_file = cli_env.zk_auth_file(zk_auth, kind)
    except cli_env.CommandError as exc:
        raise BadInput(str(exc)) from None
    if kind == "zookeeper":
        if not zk_hosts:
            raise BadInput("--state-manager zookeeper needs --zk HOST:PORT[,HOST:PORT...]")
        spec = StateManagerSpec(kind="zookeeper", zk_hosts=zk_hosts, zk_root=zk_root,
                                zk_auth_file=str(auth_file) if auth_file else None)
    else:
        if zk_hosts:
            raise BadInput("--zk goes with the zookeeper state manager, not --state-manager local")
        spec = StateManagerSpec(kind="local",
                                root=str((state_root or home / "state").expanduser().resolve()))
    return spec


def _cluster_state_spec(home: Path, cluster: str, state_kind: str | None,
                        zk_hosts: str | None, state_root: Path | None) -> StateManagerSpec:
    """The state manager of ``cluster`` (HOME/conf/CLUSTER/statemgr.yaml); ``local``
    without a directory is this machine's tree."""
    # deferred: CLI start-up time
    from engine.common.cluster.config import ClusterConfigError, ClusterRef, load_cluster
    from engine.common.launch import StateManagerSpec

    if state_kind or zk_hosts:
        raise BadInput("--cluster says where the state is; drop --state-manager/--zk")
    try:
        config = load_cluster(home, ClusterRef.parse(cluster).cluster)
    except ClusterConfigError as exc:
        raise BadInput(str(exc)) from None
    if config.state_manager != "zookeeper":
        return StateManagerSpec(kind="local",
                                root=str((state_root or home / "state").expanduser().resolve()))
    return StateManagerSpec(kind="zookeeper", zk_hosts=config.zk_hosts, zk_root=config.zk_root,
                            zk_auth_file=str(config.zk_auth_file) if config.zk_auth_file
                            else None)
