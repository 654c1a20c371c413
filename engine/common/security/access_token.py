"""The per-user access token of the tracker, the UI and the Metrics Managers' endpoints.

Other local users are untrusted (docs/security.md), yet anyone can open a loopback port.
So every HTTP server the engine runs for people (the tracker and its page, ``heron ui``,
each Metrics Manager's Prometheus endpoint) answers only requests that carry this token,
and every client of ours (the CLI, the UI's forwarding, tests) reads it from where the
servers do: ``HOME/access-token``, HOME being the Heron home (``--home``,
``$HERON_HOME``, ``~/.heron``). The file is owner-only (0600 in the 0700 home), made on
first use, and refused (one line naming the file and the fix) when another user owns it
or can read it, since then it protects nothing.

The token is one line of URL-safe text, which is also what Prometheus's scrape config
``authorization: {credentials_file: ~/.heron/access-token}`` sends as a bearer token.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
from pathlib import Path

from engine.common.security.private import (
    UnsafePathError,
    private_dir,
    read_private_file,
    write_private_file,
)

TOKEN_FILE = "access-token"
#: the cookie the one-time ``?token=`` link sets (HttpOnly, SameSite=Lax: engine/tools/ui/auth.py).
#: Lax, not Strict: a link followed from another site (a chat, a wiki page) is a cross-site
#: navigation, and so is the redirect that sets the cookie; a Strict cookie would not be
#: sent with the redirected request, which would then be refused.
COOKIE = "heron_token"
#: the query parameter of the link ``heron tracker`` prints
QUERY = "token"
#: what a token looks like: secrets.token_urlsafe(32) gives 43 such characters
_SHAPE = re.compile(r"[A-Za-z0-9_-]{32,128}")
DEFAULT_HOME = "~/.heron"


class AccessTokenError(UnsafePathError):
    """The token file is unsafe, unreadable or damaged; the text names it and the fix
    (an UnsafePathError, so every command reports it in one line, exit 2)."""


def default_home() -> Path:
    """The Heron home of a process given none: ``$HERON_HOME``, else ``~/.heron``."""
    return Path(os.environ.get("HERON_HOME") or DEFAULT_HOME).expanduser()


def token_path(home: Path | str) -> Path:
    return Path(home).expanduser() / TOKEN_FILE


def load_or_create(home: Path | str) -> str:
    """The token of ``home``, made on first use. Two processes making it at once agree:
    the file appears whole under its name (a hard link of a finished file), and the
    loser reads the winner's."""
    path = token_path(home)
    try:
        private_dir(path.parent)
    except UnsafePathError as exc:
        raise AccessTokenError(str(exc)) from None
    try:
        return read_token(path)
    except FileNotFoundError:
        pass
    try:
        staged = write_private_file(path.parent / f".{TOKEN_FILE}.{secrets.token_hex(8)}",
                                    (secrets.token_urlsafe(32) + "\n").encode())
    except OSError as exc:
        raise AccessTokenError(f"{path}: cannot create the access token: "
                               f"{exc.strerror or exc}") from None
    try:
        os.link(staged, path)
    except FileExistsError:
        pass
    except OSError as exc:
        raise AccessTokenError(f"{path}: cannot create the access token: "
                               f"{exc.strerror or exc}") from None
    finally:
        staged.unlink(missing_ok=True)
    return read_token(path)


def read_token(path: Path | str) -> str:
    """The token in an existing file; FileNotFoundError when absent, AccessTokenError
    (naming the file, never its content) when it is unsafe or not a token."""
    path = Path(path)
    try:
        data = read_private_file(path)
    except UnsafePathError as exc:
        raise AccessTokenError(f"access token {exc}") from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise AccessTokenError(f"{path}: cannot read the access token: "
                               f"{exc.strerror or exc}") from None
    token = data.decode("ascii", "replace").strip()
    if not _SHAPE.fullmatch(token):
        raise AccessTokenError(f"{path}: not an access token (one line of 32 to 128 "
                               f"characters A-Z a-z 0-9 _ -); remove it and a new one is made")
    return token


def matches(expected: str, given: str | None) -> bool:
    """Whether ``given`` is the token, in time independent of where they differ."""
    if not given:
        return False
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))


def bearer(authorization: str | None) -> str | None:
    """The credentials of an ``Authorization: Bearer X`` header, else None."""
    if not authorization:
        return None
    scheme, _, credentials = authorization.strip().partition(" ")
    return credentials.strip() or None if scheme.lower() == "bearer" else None


def auth_header(token: str) -> dict[str, str]:
    """The header every client of ours sends."""
    return {"Authorization": f"Bearer {token}"}


def home_of_working_dir(working_dir: Path | str) -> Path:
    """The Heron home of a topology's process: ``HOME`` for a working directory
    ``HOME/topologies/NAME`` (``heron submit --home HOME`` on this machine), else
    :func:`default_home` (``heron run``, a cluster node: the same user's home there)."""
    directory = Path(working_dir)
    if directory.parent.name == "topologies":
        return directory.parent.parent
    return default_home()


__all__ = ["COOKIE", "QUERY", "TOKEN_FILE", "AccessTokenError", "auth_header", "bearer",
           "default_home", "home_of_working_dir", "load_or_create", "matches", "read_token",
           "token_path"]
