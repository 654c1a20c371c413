"""``heron ui``: the page alone, forwarding its API requests to a tracker, as Heron's UI
does."""

from __future__ import annotations

import click

from engine.cli.serving import (DEFAULT_TRACKER_URL, DEFAULT_UI_PORT, BadInput, bind_socket,
                                check_host, configure_logging, run_reporting_errors, serve,
                                server_url)


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
    run_reporting_errors(_ui, port=port, host=host, allow_remote=allow_remote, tracker_url=tracker_url,
         timeout=timeout, open_name=open_name)


def _ui(*, port: int, host: str, allow_remote: bool, tracker_url: str, timeout: float,
        open_name: str | None) -> None:
    # deferred: CLI start-up time (every command module loads for `heron --help`)
    from engine.ui.app import create_ui_app
    from engine.ui.pages import topology_path

    check_host(host, allow_remote)
    if not tracker_url.startswith(("http://", "https://")):
        raise BadInput(f"--tracker {tracker_url!r}: give an http:// or https:// URL")
    sock = bind_socket(host, port)
    url = server_url(sock)
    configure_logging()
    click.echo(f"heron ui serving on {url}/ui/ (tracker: {tracker_url})", err=True)
    try:
        serve(create_ui_app(tracker_url, timeout=timeout), sock,
              open_url=url + topology_path(open_name) if open_name else None)
    finally:
        sock.close()
