"""The tracker's FastAPI application: ``create_app(state_spec)``.

The app owns one :class:`~engine.tools.tracker.service.Tracker` (opened when the server
starts, closed when it stops). Every failure becomes a JSON ``{"detail": "..."}`` that
names what went wrong with the status of :mod:`engine.tools.tracker.errors`; FastAPI's own
validation errors keep their 422 and list of errors, with a ``detail`` sentence naming
the parameter. The web page (``engine.tools.ui``) is served by the same app unless
``ui=False``; OpenAPI is at ``/openapi.json`` and ``/docs``, whose Swagger UI assets
come from the ``swagger-ui-bundle`` package rather than a CDN (the tracker runs on
machines without internet access).

Every request needs the user's access token (``engine.tools.ui.auth``: a bearer header, or the
cookie of the link ``heron tracker`` prints); a request without it is a 401 with no data,
counted in ``/health``'s ``requests_refused``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from engine.common.launch import StateManagerSpec
from engine.common.security.access_token import default_home, load_or_create
from engine.tmanager.client import TManagerUnavailable
from engine.tools.tracker import routes
from engine.tools.tracker.errors import TrackerError, Unavailable
from engine.tools.tracker.service import Tracker, TrackerSettings
from engine.tools.ui.auth import require_token
from engine.tools.ui.pages import mount_pages

log = logging.getLogger("heron.tracker")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("heron-storm-compat")
    except PackageNotFoundError:
        return "0"


def describe_validation(errors: list[dict[str, Any]]) -> str:
    """One sentence naming each bad parameter: ``query parameter 'interval': ...``."""
    parts = []
    for error in errors:
        loc = [str(p) for p in error.get("loc", ())]
        where = f"{loc[0]} parameter {loc[1]!r}" if len(loc) >= 2 else " ".join(loc) or "request"
        message = error.get("msg", "invalid")
        if error.get("type") == "missing":
            parts.append(f"missing {where}")
        else:
            shown = error.get("input")
            parts.append(f"{where}: {message}" + (f" (got {shown!r})" if shown is not None
                                                  and not isinstance(shown, (dict, list)) else ""))
    return "; ".join(parts) or "invalid request"


def create_app(state_spec: StateManagerSpec, settings: TrackerSettings | None = None, *,
               ui: bool = True, tracker: Tracker | None = None,
               token: str | None = None) -> FastAPI:
    """The tracker app over the state manager ``state_spec`` (an
    ``engine.common.launch.StateManagerSpec``). ``tracker`` may be given already started (the
    CLI opens the state manager first to report a bad address cleanly). ``token`` is
    the access token every request must carry; by default the one of the settings' Heron
    home (made there on first use), so an app is never served without one."""
    if token is None:
        token = load_or_create((settings.home if settings else None) or default_home())
    tracker = tracker or Tracker(state_spec, settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(tracker.start)
        try:
            yield
        finally:
            await run_in_threadpool(tracker.stop)

    app = FastAPI(
        title="Heron Tracker (heron-storm-compat)", version=_version(), lifespan=lifespan,
        docs_url=None, redoc_url=None,
        description="Topologies, their logical, packing and physical plans, execution state, "
                    "metrics (per component and instance, over time windows), exceptions, "
                    "backpressure and log files, from the state manager "
                    f"({state_spec.describe()}) and the Topology Masters.")
    app.state.tracker = tracker
    refusals = require_token(app, token)
    app.include_router(routes.router)
    _mount_api_docs(app)

    @app.exception_handler(TrackerError)
    async def tracker_error(request: Request, exc: TrackerError) -> JSONResponse:
        if exc.status >= 500:
            log.warning("%s %s: %s", request.method, request.url.path, exc)
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)

    @app.exception_handler(TManagerUnavailable)
    async def tmanager_unavailable(request: Request, exc: TManagerUnavailable) -> JSONResponse:
        return await tracker_error(request, Unavailable(str(exc)))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = jsonable_encoder(exc.errors())
        return JSONResponse({"detail": describe_validation(errors), "errors": errors},
                            status_code=422)

    if ui:
        mount_pages(app)
    else:
        @app.get("/", include_in_schema=False)
        def index() -> dict[str, str]:
            return {"name": "heron tracker", "version": _version(), "docs": "/docs",
                    "openapi": "/openapi.json", "topologies": "/topologies"}

    @app.get("/health", include_in_schema=False)
    def health() -> dict[str, str | int]:
        return {"status": "ok", "requests_refused": refusals.count}

    return app


def _mount_api_docs(app: FastAPI) -> None:
    """Swagger UI at ``/docs``, every asset served from this origin."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles
    from swagger_ui_bundle import swagger_ui_path

    app.mount("/docs/assets", StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title}: API",
                                   swagger_js_url="/docs/assets/swagger-ui-bundle.js",
                                   swagger_css_url="/docs/assets/swagger-ui.css",
                                   swagger_favicon_url="/docs/assets/favicon-32x32.png")


__all__ = ["TrackerSettings", "create_app", "describe_validation"]
