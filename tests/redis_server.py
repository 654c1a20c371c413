"""A real, throw-away Redis server for tests, run from Debian's ``redis-server`` package.

Why a real server and not a fake: the Redis connectors' guarantees rest on what only a
server does (a ``MULTI``/``EXEC`` applied whole or not at all, ``WATCH`` aborting a
transaction, stream ids, ``XREAD`` bounds), so their tests talk to one. Each server gets
its own temporary directory (its working directory and log), a port found by binding port
0, listens on loopback only, saves nothing to disk (no RDB, no AOF: a test's data dies with
it), and runs in its own process group so stop() takes down everything it started. It is
also told to die with the process that started it (PR_SET_PDEATHSIG), so a killed test run
leaves no server. The package's own system service is never used (the install script keeps
it from starting).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tests.zookeeper_server import _die_with_parent_hook, free_port

__all__ = ["RedisServer", "RedisUnavailable", "missing_requirements", "ping"]


class RedisUnavailable(RuntimeError):
    """redis-server is not installed (the test should be skipped, or fail in the script)."""


def redis_server_binary() -> str | None:
    """The ``redis-server`` executable, or None."""
    return shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").is_file() else None)


def missing_requirements() -> str | None:
    """Why a server cannot be started here, or None when it can."""
    if redis_server_binary() is None:
        return "redis-server is not installed (apt-get install redis-server)"
    return None


def ping(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when a Redis server answers ``PING`` at host:port (raw RESP, no client library,
    so the fixture needs nothing but the server)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class _PortTaken(Exception):
    """The chosen port was taken before the server could bind it."""


class RedisServer:
    """One standalone ``redis-server`` on 127.0.0.1 at a free port; ``url`` is
    ``redis://127.0.0.1:PORT/0``, what ``heron.connectors.redis.url`` takes."""

    def __init__(self, *, host: str = "127.0.0.1", start_timeout: float = 20.0) -> None:
        self.host = host
        self.start_timeout = start_timeout
        self.port: int | None = None
        self.workdir: Path | None = None
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """The connection URL for redis-py's ``Redis.from_url`` (database 0)."""
        if self.port is None:
            raise RuntimeError("RedisServer is not started")
        return f"redis://{self.host}:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    @property
    def log_path(self) -> Path | None:
        return None if self.workdir is None else self.workdir / "redis.log"

    def log_tail(self, lines: int = 30) -> str:
        """The end of the server's log, for failure messages."""
        path = self.log_path
        if path is None or not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def serving(self) -> bool:
        return self.port is not None and ping(self.host, self.port)

    def start(self) -> RedisServer:
        """Start the server and wait until it answers PING; raise with its log otherwise.

        The port is free when chosen but another process may take it before redis-server
        binds it, so a start that fails with "Address already in use" is tried again on a
        new port (a few times)."""
        why = missing_requirements()
        if why:
            raise RedisUnavailable(why)
        if self.proc is not None:
            raise RuntimeError("RedisServer already started")
        for attempt in range(3):
            try:
                return self._start_once()
            except _PortTaken:
                if attempt == 2:
                    raise RuntimeError("Redis: every port tried was taken") from None
        raise AssertionError("unreachable")

    def _start_once(self) -> RedisServer:
        self.workdir = Path(tempfile.mkdtemp(prefix="heron-redis-"))
        self.port = free_port(self.host)
        command = [
            redis_server_binary() or "redis-server",
            "--port", str(self.port), "--bind", self.host,
            "--dir", str(self.workdir), "--logfile", str(self.log_path),
            "--daemonize", "no", "--save", "", "--appendonly", "no",
            "--protected-mode", "yes", "--unixsocket", "", "--databases", "16",
        ]
        self.proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, cwd=self.workdir, start_new_session=True,
            preexec_fn=_die_with_parent_hook())  # noqa: PLW1509 - it only calls prctl
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            returncode = self.proc.poll()
            if returncode is not None:
                tail = self.log_tail(200)
                self.stop()
                if "Address already in use" in tail:
                    raise _PortTaken()
                tail = "\n".join(tail.splitlines()[-30:])
                raise RuntimeError(f"redis-server exited with {returncode} while starting; "
                                   f"log:\n{tail}")
            if self.serving():
                return self
            time.sleep(0.05)
        tail = self.log_tail()
        url = self.url
        self.stop()
        raise RuntimeError(f"redis-server at {url} did not answer within "
                           f"{self.start_timeout:g}s; log:\n{tail}")

    def stop(self, grace: float = 5.0) -> None:
        """Stop the process group (SIGTERM, SIGKILL after ``grace``), wait for it, and remove
        the temporary directory. Safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is not None:
            self._signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal_group(proc, signal.SIGKILL)
                proc.wait(10)
            self._signal_group(proc, signal.SIGKILL)
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    @staticmethod
    def _signal_group(proc: subprocess.Popen, sig: int) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
