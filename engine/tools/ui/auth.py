"""The access-token check in front of the tracker and the UI server.

Every request must carry the user's access token (engine/common/security/access_token.py):
``Authorization: Bearer TOKEN`` (the CLI, ``heron ui`` forwarding to a tracker, scripts),
or the cookie a browser got from the one-time link ``heron tracker`` prints
(``/ui/?token=TOKEN``): that request is answered with a redirect to the same URL without
the token, setting an HttpOnly, SameSite cookie, so the token leaves the address bar and
the history, and the page's own requests carry it without script ever seeing it (as
Jupyter does). Anything else is a 401 with no data, counted (:class:`Refusals`) and
logged by count, never with its URL (which could hold a wrong or right token).

Kept as plain ASGI so it wraps the whole app: static files, docs and mounted apps
included, and the check runs before any route or dependency.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from starlette.applications import Starlette

from engine.common.security.access_token import COOKIE, QUERY, bearer, matches

log = logging.getLogger("heron.tracker")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

REFUSED_DETAIL = ("missing or wrong access token: send 'Authorization: Bearer TOKEN' with the "
                  "token in HOME/access-token, or open the link `heron tracker` printed")


def cookie_name(scope: Scope) -> str:
    """One cookie per port (cookies do not tell ports apart): a tracker and a ``heron ui``
    of different homes on one host keep their own."""
    server = scope.get("server") or ("", 0)
    return f"{COOKIE}_{server[1] or 0}"


class Refusals:
    """How many requests were answered 401 since the server started (``/health`` shows
    it): a count, so someone probing shows up without each attempt filling the log."""

    def __init__(self) -> None:
        self.count = 0


class TokenGuard:
    """ASGI middleware: passes a request on only when it carries ``token``."""

    def __init__(self, app: ASGIApp, token: str, refusals: Refusals) -> None:
        self.app = app
        self._token = token
        self.refusals = refusals

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)  # lifespan
            return
        headers = _headers(scope)
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                          keep_blank_values=True)
        link_token = next((v for k, v in query if k == QUERY), None)
        if link_token is not None:
            if matches(self._token, link_token) and scope["type"] == "http":
                await self._redirect_setting_cookie(scope, query, send)
                return
            await self._refuse(scope, send)
            return
        if matches(self._token, bearer(headers.get("authorization"))) \
                or matches(self._token, _cookie(headers.get("cookie"), cookie_name(scope))):
            await self.app(scope, receive, send)
            return
        await self._refuse(scope, send)

    async def _redirect_setting_cookie(self, scope: Scope, query: list[tuple[str, str]],
                                       send: Send) -> None:
        rest = urlencode([(k, v) for k, v in query if k != QUERY])
        raw = scope.get("raw_path")  # as the client sent it, still percent-encoded
        path = raw.decode("latin-1") if raw else quote(scope["path"])
        location = scope.get("root_path", "") + path + (f"?{rest}" if rest else "")
        cookie = (f"{cookie_name(scope)}={self._token}; Path=/; HttpOnly; SameSite=Lax")
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", location.encode("latin-1", "replace")),
            (b"set-cookie", cookie.encode()), (b"cache-control", b"no-store"),
            (b"referrer-policy", b"no-referrer"), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    async def _refuse(self, scope: Scope, send: Send) -> None:
        self.refusals.count += 1
        count = self.refusals.count
        if count == 1 or count % 100 == 0:
            client = (scope.get("client") or ("?",))[0]
            log.warning("refused a request without a valid access token from %s (%d refused "
                        "so far)", client, count)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"detail": REFUSED_DETAIL}).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="heron"'), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1")
            for k, v in scope.get("headers", ())}


def _cookie(header: str | None, name: str) -> str | None:
    if not header:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # a malformed Cookie header is no token
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


def require_token(app: Starlette, token: str) -> Refusals:
    """Put ``app`` (a Starlette/FastAPI app) behind the token check, outside every route
    and mount; returns its count of refusals, also ``app.state.refusals``."""
    refusals = Refusals()
    app.add_middleware(TokenGuard, token=token, refusals=refusals)
    app.state.refusals = refusals
    return refusals


__all__ = ["REFUSED_DETAIL", "Refusals", "TokenGuard", "cookie_name", "require_token"]
