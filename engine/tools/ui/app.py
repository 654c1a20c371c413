"""``heron ui``: the page on its own server, its API requests forwarded to a tracker.

The page only ever talks to its own origin; this app answers ``/topologies/*``,
``/clusters``, ``/openapi.json`` and ``/docs`` by asking the tracker at ``tracker_url``
(bounded by a timeout) and passing its answer through, status and body unchanged, so
the page behaves the same whichever server it came from. A tracker that does not answer
is a 502 naming it.

Both ends need the user's access token: the UI server checks it on every request
(``engine.tools.ui.auth``, the link ``heron ui`` prints sets the page's cookie) and sends it to
the tracker as a bearer header; a tracker of another home refuses it, and its 401 is
passed through like any other answer.
"""

from __future__ import annotations

import email.message
import urllib.error
import urllib.request

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from engine.common.security.access_token import auth_header
from engine.tools.ui.auth import require_token
from engine.tools.ui.pages import mount_pages

#: response headers passed through from the tracker
_PASSED = ("content-type", "cache-control", "x-content-type-options")


class TrackerProxy:
    """GET requests to one tracker with the access token, ignoring any HTTP proxy
    settings (the tracker is normally on loopback)."""

    def __init__(self, tracker_url: str, timeout: float, token: str) -> None:
        self.base = tracker_url.rstrip("/")
        self.timeout = timeout
        self._headers = {"Accept": "application/json, */*", **auth_header(token)}
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def get(self, path: str, query: str) -> Response:
        url = self.base + path + (f"?{query}" if query else "")
        request = urllib.request.Request(url, headers=self._headers)
        try:
            with self._opener.open(request, timeout=self.timeout) as answer:
                return self._response(answer.status, answer.headers, answer.read())
        except urllib.error.HTTPError as exc:
            return self._response(exc.code, exc.headers, exc.read())
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            return JSONResponse({"detail": f"the tracker at {self.base} did not answer: {reason}"},
                                status_code=502)

    @staticmethod
    def _response(status: int, headers: email.message.Message, body: bytes) -> Response:
        passed = {k: v for k, v in headers.items() if k.lower() in _PASSED}
        return Response(body, status_code=status, headers=passed)


def create_ui_app(tracker_url: str, *, token: str, timeout: float = 10.0) -> FastAPI:
    """The UI server for the tracker at ``tracker_url`` (e.g. http://127.0.0.1:8888),
    answering only requests with ``token`` and sending it to the tracker."""
    proxy = TrackerProxy(tracker_url, timeout, token)
    app = FastAPI(title="Heron UI (heron-storm-compat)", docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.proxy = proxy
    require_token(app, token)
    mount_pages(app)

    async def forward(request: Request) -> Response:
        return await run_in_threadpool(proxy.get, request.url.path, request.url.query)

    for path in ("/clusters", "/topologies", "/topologies/{rest:path}", "/openapi.json",
                 "/docs", "/health"):
        app.add_api_route(path, forward, methods=["GET"], include_in_schema=False)
    return app
