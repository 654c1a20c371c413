"""Serving the page: the HTML shell for every UI path, and the static files."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parent / "static"

#: Only this origin: the page cannot load or send anything elsewhere, and an injected
#: inline script would not run.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
       "form-action 'self'")
PAGE_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"}


@lru_cache(maxsize=1)
def _shell() -> str:
    return (STATIC / "index.html").read_text(encoding="utf-8")


def page() -> HTMLResponse:
    """The HTML shell; the script reads the path and draws the list or one topology."""
    return HTMLResponse(_shell(), headers=PAGE_HEADERS)


def topology_path(name: str) -> str:
    """The page of one topology, relative to the server's root."""
    from urllib.parse import quote

    return f"/ui/topologies/{quote(name, safe='')}"


def mount_pages(app: FastAPI) -> None:
    """Add ``/``, ``/ui/``, ``/ui/topologies/{name}`` and ``/static`` to ``app``."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/ui/")

    @app.get("/ui", include_in_schema=False)
    def ui_root() -> RedirectResponse:
        return RedirectResponse("/ui/")

    @app.get("/ui/", include_in_schema=False)
    def topology_list() -> HTMLResponse:
        return page()

    @app.get("/ui/topologies/{name}", include_in_schema=False)
    def topology_page(name: str) -> HTMLResponse:
        return page()
