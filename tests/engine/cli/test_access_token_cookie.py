"""The cookie of the one-time link ``heron tracker``, ``heron ui`` and ``heron open`` give
(``/ui/?token=TOKEN``) is ``SameSite=Lax``, so the link works when followed from another
site, and what the code's own description (engine/common/security/access_token.py) and
docs/security.md say of it is what the server sets."""

from __future__ import annotations

import asyncio
import inspect
import re
from pathlib import Path

import engine.common.security.access_token as access_token
from engine.tools.ui.auth import Refusals, TokenGuard

REPO = Path(__file__).resolve().parents[3]
TOKEN = "t" * 43
SAME_SITE = re.compile(r"SameSite=(\w+)")


def link_cookie() -> str:
    """The Set-Cookie header the guard answers the one-time link with."""
    sent: list[dict] = []

    async def app(scope, receive, send):  # never reached: the link is redirected
        raise AssertionError("the link request went through")

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/ui/", "raw_path": b"/ui/",
             "query_string": f"token={TOKEN}".encode(), "headers": [],
             "server": ("127.0.0.1", 8888), "client": ("127.0.0.1", 50000)}
    asyncio.run(TokenGuard(app, TOKEN, Refusals())(scope, None, send))
    start = sent[0]
    assert start["status"] == 303
    return dict(start["headers"])[b"set-cookie"].decode()


def test_the_one_time_link_sets_a_lax_cookie_as_the_code_and_docs_describe_it() -> None:
    cookie = link_cookie()
    assert cookie.startswith("heron_token_8888=") and "HttpOnly" in cookie
    served = SAME_SITE.findall(cookie)
    assert served == ["Lax"]  # Strict would not be sent after a link from another site
    described = SAME_SITE.findall(inspect.getsource(access_token))
    documented = SAME_SITE.findall((REPO / "docs" / "security.md").read_text())
    assert described and set(described) == set(served), described
    assert documented and set(documented) == set(served), documented
