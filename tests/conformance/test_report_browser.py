"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``) loads
``index.html`` from disk, driven over the DevTools protocol on a pipe (tests/browser.py:
no network port, no extra dependency); the page must raise no console errors or
exceptions, hostile values must stay text (nothing runs), and a screenshot is taken.

scripts/test.sh installs Chromium; without it these tests are skipped with the reason.
"""

from __future__ import annotations

import json

import pytest

from conformance.report import write_report
from tests.browser import Chromium, find_chromium, png_size
from tests.conformance.test_report import HOSTILE, sample_suite
from tests.unavailable import unavailable

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        unavailable("Debian's chromium is not installed (scripts/test.sh installs it: "
                    "apt-get install chromium); the browser check of the report is skipped")
    return path


@pytest.fixture
def browser(chromium_path, tmp_path):
    chrome = Chromium(chromium_path, tmp_path / "chromium")
    try:
        yield chrome
    finally:
        chrome.close()


def test_report_loads_in_chromium_without_console_errors(browser, tmp_path):
    paths = write_report(sample_suite(), tmp_path / "report")
    session = browser.open_page(paths["html"].resolve().as_uri())
    state = browser.evaluate(session, f"""JSON.stringify({{
        title: document.title,
        scripts: document.scripts.length,
        pwned: typeof window.__pwned,
        hostileShown: document.body.innerText.includes({json.dumps(HOSTILE)}),
        rows: document.querySelectorAll("table.matrix tbody tr").length,
        cases: document.querySelectorAll("article.case").length,
        stylesheets: document.styleSheets.length
    }})""")
    state = json.loads(state)
    shot = browser.screenshot(session, tmp_path / "report.png")
    assert browser.problems(session) == [], browser.log_tail()
    assert state["title"].startswith("Conformance: 7 cases")
    assert state["scripts"] == 0 and state["pwned"] == "undefined"
    assert state["hostileShown"] is True
    assert state["rows"] == 7 and state["cases"] == 7
    assert state["stylesheets"] == 1  # the inline <style> applied despite the CSP
    data = shot.read_bytes()
    width, height = png_size(data)
    assert width >= 800 and height >= 600
    assert len(data) > 20_000  # a rendered page, not a blank image


def test_console_errors_are_detected(browser, tmp_path):
    """The check above can fail: a page that logs an error and throws is caught."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><head><title>broken</title>"
                    "<link rel='icon' href='data:,'></head><body><p>x</p><script>"
                    "console.error('boom from console');"
                    "throw new Error('boom uncaught');</script></body></html>")
    session = browser.open_page(page.resolve().as_uri())
    browser.evaluate(session, "1")  # a round trip: earlier events have arrived
    problems = browser.problems(session)
    assert any("boom from console" in p for p in problems), problems
    assert any("boom uncaught" in p for p in problems), problems
