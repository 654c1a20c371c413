"""What ``heron tracker``, ``heron ui`` and ``heron open`` share: the servers bind to
loopback unless told otherwise (they speak plain HTTP, so the access token and the log
files they serve would cross the network in the clear: another address needs ``--host
ADDR --allow-remote``), the link with the access token, and errors print as one line,
``heron: error: ...``: exit 2 for bad input (an unknown topology, a remote address
without ``--allow-remote``), 1 when something does not answer or a port cannot be bound.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import signal
import socket
import sys
import threading
import webbrowser
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, NoReturn, ParamSpec, TypeVar

import click

from engine.common.security.private import UnsafePathError

if TYPE_CHECKING:  # types only: the web stack loads only when a server runs
    from starlette.applications import Starlette

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_TRACKER_PORT = 8888
DEFAULT_UI_PORT = 8889
DEFAULT_TRACKER_URL = f"http://127.0.0.1:{DEFAULT_TRACKER_PORT}"


class CommandError(Exception):
    code = 1


class BadInput(CommandError):
    code = 2


def fail(message: str, code: int) -> NoReturn:
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
        raise BadInput(f"refusing to serve on {host}: the tracker and the UI speak plain "
                       "HTTP, so the access token and the log files they serve would cross "
                       "the network in the clear; add --allow-remote to serve on an address "
                       "other than loopback")


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


def link(url: str, path: str, token: str) -> str:
    """The one-time link to ``path`` that sets the browser's cookie (engine.tools.ui.auth)."""
    from urllib.parse import quote  # deferred: CLI start-up time

    return f"{url}{path}{'&' if '?' in path else '?'}token={quote(token, safe='')}"


def open_link(url: str) -> bool:
    """Open ``url`` (a link with the token) in a browser without putting it on a command
    line, where ``ps`` shows it to every user: the browser is given an owner-only page
    in the runtime root that forwards to it (as Jupyter does). False when no browser
    could be started."""
    import html  # deferred: CLI start-up time

    from engine.common.security.private import runtime_root, write_private_file

    quoted = html.escape(url, quote=True)
    page = write_private_file(runtime_root() / "open-page.html", (
        f'<!DOCTYPE html><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
        f'<meta http-equiv="refresh" content="0;url={quoted}">'
        f'<title>heron</title><a href="{quoted}">open the page</a>\n').encode())
    return webbrowser.open(page.as_uri())


class ScrubTokens(logging.Filter):
    """Replaces ``token=...`` in a record's text: whatever a server library logs of a
    URL (the link's query), the token never reaches a log. (uvicorn's access log is off
    as well.)"""

    PATTERN = re.compile(r"(token=)[^&\s\"']+")

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if "token=" in text:
            record.msg, record.args = self.PATTERN.sub(r"\1<redacted>", text), ()
        return True


def scrub_server_logs() -> None:
    """A filter on each logger uvicorn logs to (a logger's filter sees only its own
    records, hence each by name)."""
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, ScrubTokens) for f in logger.filters):
            logger.addFilter(ScrubTokens())


def configure_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    handler.addFilter(ScrubTokens())  # on the handler: it sees every heron.* record
    logger = logging.getLogger("heron")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False


def serve(app: Starlette, sock: socket.socket, *, open_url: str | None = None) -> None:
    """Run ``app`` on ``sock`` with uvicorn until Ctrl-C or SIGTERM (graceful shutdown)."""
    import uvicorn  # deferred: CLI start-up time (the server loads only when one runs)

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    scrub_server_logs()  # after uvicorn.Config, which sets up its loggers
    server = uvicorn.Server(config)
    if open_url is not None:
        def open_when_started() -> None:
            for _ in range(300):
                if server.started:
                    open_link(open_url)
                    return
                if server.should_exit:
                    return
                threading.Event().wait(0.1)
        threading.Thread(target=open_when_started, name="open-browser", daemon=True).start()
    # uvicorn stops gracefully on SIGINT/SIGTERM, then raises the signal again once its
    # own handlers are gone; these handlers take that second delivery, so a requested stop
    # ends the command normally (exit 0) instead of by the signal or a KeyboardInterrupt.
    def stop(signum: int, frame: FrameType | None) -> None:
        server.should_exit = True

    watched = (signal.SIGINT, signal.SIGTERM)
    previous = ({s: signal.signal(s, stop) for s in watched}
                if threading.current_thread() is threading.main_thread() else {})
    try:
        server.run(sockets=[sock])
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_reporting_errors(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    try:
        return fn(*args, **kwargs)
    except CommandError as exc:
        fail(str(exc), exc.code)
    except UnsafePathError as exc:
        fail(str(exc), 2)
