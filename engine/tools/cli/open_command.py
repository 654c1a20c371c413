"""``heron open NAME``: open the page of a running topology. It asks the tracker with
the access token of the Heron home and opens the page's one-time link (which sets the
browser's cookie, engine.tools.ui.auth)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import click

from engine.tools.cli.serving import (
    DEFAULT_TRACKER_URL,
    BadInput,
    CommandError,
    link,
    open_link,
    run_reporting_errors,
)


# -- heron open ---------------------------------------------------------------------------------
@click.command("open")
@click.argument("name")
@click.option("--url", "base_url", default=DEFAULT_TRACKER_URL, show_default=True,
              help="The tracker (or `heron ui`) serving the page.")
@click.option("--print-only", is_flag=True,
              help="Print the page's link (it holds the access token); open no browser.")
@click.option("--home", envvar="HERON_HOME", default="~/.heron", show_default=True,
              type=click.Path(path_type=Path),
              help="The Heron home holding the access token (access-token). Env: HERON_HOME.")
def open_command(name: str, base_url: str, print_only: bool, home: Path) -> None:
    """Open the web page of running topology NAME (served by `heron tracker` or `heron ui`)."""
    run_reporting_errors(_open, name=name, base_url=base_url, print_only=print_only,
                         home=home)


def _open(*, name: str, base_url: str, print_only: bool, home: Path) -> None:
    # deferred: CLI start-up time
    from engine.common.security.access_token import auth_header, load_or_create
    from engine.tools.ui.pages import topology_path

    base = base_url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise BadInput(f"--url {base_url!r}: give an http:// or https:// URL")
    token = load_or_create(home.expanduser().resolve())
    check = urllib.request.Request(f"{base}/topologies/info?{urlencode({'topology': name})}",
                                   headers=auth_header(token))
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
        if exc.code == 401:
            raise CommandError(f"{base} refused the access token of {home}: is it a tracker "
                               "of another Heron home? (give --home)") from None
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
    page = link(base, topology_path(name), token)
    click.echo(page)
    if not print_only and not open_link(page):
        click.echo("no browser could be started here; open the URL above", err=True)
