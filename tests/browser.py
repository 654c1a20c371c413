"""Headless Chromium (Debian's ``chromium``) driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: no network port, no extra dependency), for tests that load
a page and check what a person would see: console errors, the DOM, a screenshot.

Shared by the browser tests (the conformance report, the tracker page).
Always :meth:`Chromium.close` a browser (it kills the browser and all it started).
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

#: bound on every wait for the browser
WAIT = 30.0


def find_chromium() -> str | None:
    for candidate in ("/usr/bin/chromium", "chromium", "chromium-browser"):
        found = shutil.which(candidate)
        if found:
            return found
    return None


class DevToolsError(RuntimeError):
    pass


class Chromium:
    """A headless Chromium spoken to over ``--remote-debugging-pipe`` (the DevTools
    protocol as NUL-terminated JSON on fds 3 and 4). Always :meth:`close` it: that kills
    the browser and every process it started."""

    def __init__(self, executable: str, workdir: Path) -> None:
        self.workdir = workdir
        profile = workdir / "profile"
        profile.mkdir(parents=True, exist_ok=True)
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        args = [executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--no-default-browser-check", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-extensions", "--disable-default-apps",
                "--mute-audio", "--hide-scrollbars", "--window-size=1280,1000",
                f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"]
        # The browser reads commands on fd 3 and writes replies on fd 4: a small
        # trampoline moves the pipe ends there and execs Chromium (same pid).
        trampoline = ("import fcntl, os, sys; "
                      "r, w = (fcntl.fcntl(int(a), fcntl.F_DUPFD, 10) for a in sys.argv[1:3]); "
                      "os.dup2(r, 3); os.dup2(w, 4); os.closerange(5, 4096); "
                      "os.execv(sys.argv[3], sys.argv[3:])")
        self.log_path = workdir / "chromium.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", trampoline, str(to_browser_r), str(from_browser_w),
                 *args], stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, pass_fds=(to_browser_r, from_browser_w),
                start_new_session=True)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []

    # -- protocol --------------------------------------------------------------------
    def _pump(self, deadline: float) -> None:
        """Read what the browser sent, up to ``deadline``."""
        remaining = max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([self._from_browser], [], [], min(remaining, 0.5))
        if not ready:
            if self.proc.poll() is not None:
                raise DevToolsError(f"chromium exited with {self.proc.returncode}: "
                                    f"{self.log_tail()}")
            return
        chunk = os.read(self._from_browser, 1 << 20)
        if not chunk:
            raise DevToolsError(f"chromium closed the DevTools pipe: {self.log_tail()}")
        self._buffer += chunk
        while b"\0" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\0", 1)
            message = json.loads(raw)
            if "id" in message:
                self._replies[message["id"]] = message
            else:
                self.events.append(message)

    def call(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None, timeout: float = WAIT) -> dict[str, Any]:
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while ident not in self._replies:
            if time.monotonic() > deadline:
                raise DevToolsError(f"no reply to {method} within {timeout} s")
            self._pump(deadline)
        reply = self._replies.pop(ident)
        if "error" in reply:
            raise DevToolsError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait_event(self, match: Callable[[dict[str, Any]], bool],
                   timeout: float = WAIT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if match(event):
                    return event
            seen = len(self.events)
            if time.monotonic() > deadline:
                raise DevToolsError(f"event not seen within {timeout} s")
            self._pump(deadline)

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    # -- a page ----------------------------------------------------------------------
    def open_page(self, url: str) -> str:
        """Attach to a fresh tab, enable console/log/runtime events, load ``url`` and wait
        for its load event. Returns the session id."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable", session=session)
        self.call("Page.navigate", {"url": url}, session=session)
        self.wait_event(lambda e: e.get("method") == "Page.loadEventFired"
                        and e.get("sessionId") == session)
        return session

    def evaluate(self, session: str, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True}, session=session)
        if "exceptionDetails" in result:
            raise DevToolsError(f"evaluate failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def problems(self, session: str) -> list[str]:
        """Console errors, uncaught exceptions and error log entries of the page."""
        out = []
        for event in self.events:
            if event.get("sessionId") != session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                out.append("exception: " + str(details.get("exception", {}).get(
                    "description") or details.get("text")))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in (
                    "error", "assert"):
                out.append("console.error: " + " ".join(
                    str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append("log: " + str(params["entry"].get("text")))
        return out

    def screenshot(self, session: str, path: Path) -> Path:
        metrics = self.call("Page.getLayoutMetrics", session=session)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        clip = {"x": 0, "y": 0, "width": min(size["width"], 1600),
                "height": min(size["height"], 5000), "scale": 1}
        data = self.call("Page.captureScreenshot",
                         {"format": "png", "clip": clip, "captureBeyondViewport": True},
                         session=session)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        """Ask the browser to close, then kill it and all it started, whatever happened."""
        try:
            family = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            family = []
        if self.proc.poll() is None:
            try:
                self.call("Browser.close", timeout=5)
            except (DevToolsError, OSError):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for child in family:
            try:
                child.kill()
            except psutil.NoSuchProcess:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        psutil.wait_procs(family, timeout=5)
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass


def wait_for(browser: Chromium, session: str, expression: str, timeout: float = WAIT,
             interval: float = 0.25) -> Any:
    """The first truthy value of ``expression`` in the page within ``timeout`` seconds;
    DevToolsError with the last value otherwise."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = browser.evaluate(session, expression)
        if value:
            return value
        time.sleep(interval)
    raise DevToolsError(f"{expression!r} still {value!r} after {timeout} s")


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG, checking its signature and header chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    header = data[16:29]
    assert struct.unpack(">I", data[29:33])[0] == zlib.crc32(b"IHDR" + header)
    width, height = struct.unpack(">II", header[:8])
    return width, height
