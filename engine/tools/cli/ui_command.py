"""``heron ui``: the page alone, forwarding its API requests to a tracker, as Heron's UI
does. It takes the access token of the Heron home, checks it on every request (the link
it prints sets the browser's cookie) and sends it to the tracker."""

from __future__ import annotations

from pathlib import Path

import click

from engine.tools.cli.serving import (
    DEFAULT_TRACKER_URL,
    DEFAULT_UI_PORT,
    BadInput,
    bind_socket,
    check_host,
    configure_logging,
    link,
    run_reporting_errors,
    serve,
    server_url,
)


# -- heron ui -----------------------------------------------------------------------------------
@click.command("ui")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_UI_PORT,
              show_default=True, help="Port to serve on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on; other than loopback needs --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow serving on a non-loopback address (plain HTTP: the access token "
                   "crosses the network in the clear).")
@click.option("--home", envvar="HERON_HOME", default="~/.heron", show_default=True,
              type=click.Path(path_type=Path),
              help="The Heron home holding the access token (access-token). Env: HERON_HOME.")
@click.option("--tracker", "tracker_url", default=DEFAULT_TRACKER_URL, show_default=True,
              help="The tracker the page reads (heron tracker).")
@click.option("--timeout", type=click.FloatRange(0.1, 300), default=10.0, show_default=True,
              help="Seconds to wait for the tracker on each request.")
@click.option("--open", "open_name", metavar="NAME",
              help="Open the page of topology NAME in a browser once serving.")
def ui_command(port: int, host: str, allow_remote: bool, home: Path, tracker_url: str,
               timeout: float, open_name: str | None) -> None:
    """Serve the web page on its own port, reading the tracker at --tracker. (`heron
    tracker` serves the same page at /ui/ itself.)"""
    run_reporting_errors(_ui, port=port, host=host, allow_remote=allow_remote, home=home,
                         tracker_url=tracker_url, timeout=timeout, open_name=open_name)


def _ui(*, port: int, host: str, allow_remote: bool, home: Path, tracker_url: str,
        timeout: float, open_name: str | None) -> None:
    # deferred: CLI start-up time (every command module loads for `heron --help`)
    from engine.common.security.access_token import load_or_create
    from engine.tools.ui.app import create_ui_app
    from engine.tools.ui.pages import topology_path

    check_host(host, allow_remote)
    if not tracker_url.startswith(("http://", "https://")):
        raise BadInput(f"--tracker {tracker_url!r}: give an http:// or https:// URL")
    token = load_or_create(home.expanduser().resolve())
    sock = bind_socket(host, port)
    url = server_url(sock)
    configure_logging()
    click.echo(f"heron ui serving on {url}/ui/ (tracker: {tracker_url})", err=True)
    # the link on stdout, apart from the log lines on stderr: the token is in no log
    click.echo(f"  open: {link(url, '/ui/', token)}")
    try:
        serve(create_ui_app(tracker_url, token=token, timeout=timeout), sock,
              open_url=link(url, topology_path(open_name), token) if open_name else None)
    finally:
        sock.close()
