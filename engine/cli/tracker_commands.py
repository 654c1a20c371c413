"""``heron tracker``, ``heron ui`` and ``heron open``: the REST API and the web page.

``heron tracker`` serves the tracker's REST API (``engine.tracker``) over the state
manager and the Topology Masters, and the page (``engine.ui``) on the same port;
``heron ui`` serves the page alone and forwards its API requests to a tracker, as
Heron's UI does; ``heron open NAME`` opens the page of a running topology.

Both servers bind to loopback unless told otherwise: they have no authentication and
serve log files, so another address needs ``--host ADDR --allow-remote``.
Errors print as one line, ``heron: error: ...``: exit 2 for bad input (an unknown
topology, a remote address without ``--allow-remote``), 1 when something does not
answer or a port cannot be bound.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import signal
import socket
import sys
import threading
import urllib.error
import urllib.request
import webbrowser
from pathlib import Path
from typing import Any

import click

from engine.cli import env as cli_env
from engine.cli.env import ZK_AUTH_HELP
from engine.security.private import private_dir

DEFAULT_TRACKER_PORT = 8888
DEFAULT_UI_PORT = 8889
DEFAULT_TRACKER_URL = f"http://127.0.0.1:{DEFAULT_TRACKER_PORT}"


class CommandError(Exception):
    code = 1


class BadInput(CommandError):
    code = 2


def _fail(message: str, code: int) -> None:
    click.echo(f"heron: error: {message}", err=True)
    sys.exit(code)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, allow_remote: bool) -> None:
    if not is_loopback(host) and not allow_remote:
        raise BadInput(f"refusing to serve on {host}: the tracker and the UI have no "
                       "authentication and serve log files; add --allow-remote to serve on "
                       "an address other than loopback")


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0 picks one), bound here so a port
    in use is a clear error and the real port is known before the server starts."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    # Listening now: a client that connects as soon as the URL is printed waits in the
    # backlog until uvicorn accepts, rather than being refused.
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def server_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    if host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"
    return f"http://{shown}:{port}"


def _configure_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger = logging.getLogger("heron")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False


def serve(app: Any, sock: socket.socket, *, open_url: str | None = None) -> None:
    """Run ``app`` on ``sock`` with uvicorn until Ctrl-C or SIGTERM (graceful shutdown)."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    if open_url is not None:
        def open_when_started() -> None:
            for _ in range(300):
                if server.started:
                    webbrowser.open(open_url)
                    return
                if server.should_exit:
                    return
                threading.Event().wait(0.1)
        threading.Thread(target=open_when_started, name="open-browser", daemon=True).start()
    # uvicorn stops gracefully on SIGINT/SIGTERM, then raises the signal again once its
    # own handlers are gone; these handlers take that second delivery, so a requested stop
    # ends the command normally (exit 0) instead of by the signal or a KeyboardInterrupt.
    def stop(signum: int, frame: Any) -> None:
        server.should_exit = True

    watched = (signal.SIGINT, signal.SIGTERM)
    previous = ({s: signal.signal(s, stop) for s in watched}
                if threading.current_thread() is threading.main_thread() else {})
    try:
        server.run(sockets=[sock])
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _run(fn: Any, *args: Any, **kwargs: Any) -> Any:
    from engine.security.private import UnsafePathError

    try:
        return fn(*args, **kwargs)
    except CommandError as exc:
        _fail(str(exc), exc.code)
    except UnsafePathError as exc:
        _fail(str(exc), 2)


# -- heron tracker ------------------------------------------------------------------------------
@click.command("tracker")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_TRACKER_PORT,
              show_default=True, help="Port to serve on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on; other than loopback needs --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow serving on a non-loopback address (no authentication!).")
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
    _run(_tracker, port=port, host=host, allow_remote=allow_remote, home=home,
         state_root=state_root, state_kind=state_kind, zk_hosts=zk_hosts, zk_root=zk_root,
         zk_auth=zk_auth, cluster_name=cluster_name, poll_interval=poll_interval,
         history_secs=history_secs, tm_timeout=tm_timeout, no_ui=no_ui, open_name=open_name)


def _tracker(*, port: int, host: str, allow_remote: bool, home: Path, state_root: Path | None,
             state_kind: str | None, zk_hosts: str | None, zk_root: str, zk_auth: Path | None,
             cluster_name: str | None, poll_interval: float, history_secs: float,
             tm_timeout: float, no_ui: bool, open_name: str | None) -> None:
    from engine.statemgr import StateError
    from engine.tracker import Tracker, TrackerSettings, create_app
    from engine.ui.pages import topology_path

    check_host(host, allow_remote)
    home = private_dir(home.expanduser().resolve())
    if cluster_name:
        spec = _cluster_state_spec(home, cluster_name, state_kind, zk_hosts, state_root)
    else:
        spec = _state_spec(home, state_kind, zk_hosts, zk_root, zk_auth, state_root)
    if open_name and no_ui:
        raise BadInput("--open needs the page: drop --no-ui")
    settings = TrackerSettings(poll_interval=poll_interval, history_secs=history_secs,
                               tm_timeout=tm_timeout, home=home)
    tracker = Tracker(spec, settings)
    try:
        tracker.start(poll=False)  # a state manager that does not answer fails here, cleanly
    except StateError as exc:
        raise CommandError(f"state manager ({spec.describe()}): {exc}") from None
    sock = bind_socket(host, port)
    url = server_url(sock)
    _configure_logging()
    click.echo(f"heron tracker serving on {url} (state: {spec.describe()})", err=True)
    click.echo(f"  API docs: {url}/docs" + ("" if no_ui else f"   page: {url}/ui/"), err=True)
    try:
        serve(create_app(spec, settings, ui=not no_ui, tracker=tracker), sock,
              open_url=url + topology_path(open_name) if open_name else None)
    finally:
        tracker.stop()
        sock.close()


def _state_spec(home: Path, state_kind: str | None, zk_hosts: str | None, zk_root: str,
                zk_auth: Path | None, state_root: Path | None) -> Any:
    """The state manager the options name: ZooKeeper with --zk, else the local tree."""
    from engine.launch import StateManagerSpec

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
                        zk_hosts: str | None, state_root: Path | None) -> Any:
    """The state manager of ``cluster`` (HOME/conf/CLUSTER/statemgr.yaml); ``local``
    without a directory is this machine's tree."""
    from engine.cluster.config import ClusterConfigError, ClusterRef, load_cluster
    from engine.launch import StateManagerSpec

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


# -- heron ui -----------------------------------------------------------------------------------
@click.command("ui")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_UI_PORT,
              show_default=True, help="Port to serve on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on; other than loopback needs --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow serving on a non-loopback address (no authentication!).")
@click.option("--tracker", "tracker_url", default=DEFAULT_TRACKER_URL, show_default=True,
              help="The tracker the page reads (heron tracker).")
@click.option("--timeout", type=click.FloatRange(0.1, 300), default=10.0, show_default=True,
              help="Seconds to wait for the tracker on each request.")
@click.option("--open", "open_name", metavar="NAME",
              help="Open the page of topology NAME in a browser once serving.")
def ui_command(port: int, host: str, allow_remote: bool, tracker_url: str, timeout: float,
               open_name: str | None) -> None:
    """Serve the web page on its own port, reading the tracker at --tracker. (`heron
    tracker` serves the same page at /ui/ itself.)"""
    _run(_ui, port=port, host=host, allow_remote=allow_remote, tracker_url=tracker_url,
         timeout=timeout, open_name=open_name)


def _ui(*, port: int, host: str, allow_remote: bool, tracker_url: str, timeout: float,
        open_name: str | None) -> None:
    from engine.ui.app import create_ui_app
    from engine.ui.pages import topology_path

    check_host(host, allow_remote)
    if not tracker_url.startswith(("http://", "https://")):
        raise BadInput(f"--tracker {tracker_url!r}: give an http:// or https:// URL")
    sock = bind_socket(host, port)
    url = server_url(sock)
    _configure_logging()
    click.echo(f"heron ui serving on {url}/ui/ (tracker: {tracker_url})", err=True)
    try:
        serve(create_ui_app(tracker_url, timeout=timeout), sock,
              open_url=url + topology_path(open_name) if open_name else None)
    finally:
        sock.close()


# -- heron open ---------------------------------------------------------------------------------
@click.command("open")
@click.argument("name")
@click.option("--url", "base_url", default=DEFAULT_TRACKER_URL, show_default=True,
              help="The tracker (or `heron ui`) serving the page.")
@click.option("--print-only", is_flag=True, help="Print the page's URL; open no browser.")
def open_command(name: str, base_url: str, print_only: bool) -> None:
    """Open the web page of running topology NAME (served by `heron tracker` or `heron ui`)."""
    _run(_open, name=name, base_url=base_url, print_only=print_only)


def _open(*, name: str, base_url: str, print_only: bool) -> None:
    from urllib.parse import urlencode

    from engine.ui.pages import topology_path

    base = base_url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise BadInput(f"--url {base_url!r}: give an http:// or https:// URL")
    check = f"{base}/topologies/info?{urlencode({'topology': name})}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(check, timeout=10):
            pass
    except urllib.error.HTTPError as exc:
        try:
            detail = json.loads(exc.read()).get("detail", exc.reason)
        except ValueError:
            detail = exc.reason
        if exc.code == 404:
            raise BadInput(str(detail)) from None
        if exc.code >= 500:
            # The topology exists but its Topology Master is slow or down: the page
            # still shows its plans and says so.
            click.echo(f"warning: {detail}", err=True)
        else:
            raise CommandError(f"{base} answered {exc.code}: {detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CommandError(f"no tracker answers at {base} ({reason}); start one with "
                           f"`heron tracker` (or give --url)") from None
    page = base + topology_path(name)
    click.echo(page)
    if not print_only and not webbrowser.open(page):
        click.echo("no browser could be started here; open the URL above", err=True)


COMMANDS = (tracker_command, ui_command, open_command)


def register(group: click.Group) -> None:
    """Add ``tracker``, ``ui`` and ``open`` to the ``heron`` group."""
    for command in COMMANDS:
        group.add_command(command)
