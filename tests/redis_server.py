"""A real, throw-away Redis server for tests, run from Debian's ``redis-server`` package.

Why a real server and not a fake: the Redis connectors' guarantees rest on what only a
server does (a ``MULTI``/``EXEC`` applied whole or not at all, ``WATCH`` aborting a
transaction, stream ids, ``XREAD`` bounds), so their tests talk to one. Each server gets
its own temporary directory (its working directory and log), a port found by binding port
0, listens on loopback only, saves nothing to disk (no RDB, no AOF: a test's data dies with
it), and runs in its own process group so stop() takes down everything it started. It is
also told to die with the process that started it (PR_SET_PDEATHSIG), so a killed test run
leaves no server (tests/local_server.py, shared with tests/zookeeper_server.py). The
package's own system service is never used (the install script keeps it from starting).
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

from tests.local_server import LocalServer

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


class RedisServer(LocalServer):
    """One standalone ``redis-server`` on 127.0.0.1 at a free port; ``url`` is
    ``redis://127.0.0.1:PORT/0``, what ``heron.connectors.redis.url`` takes."""

    service = "Redis"
    program = "redis-server"
    workdir_prefix = "heron-redis-"
    log_name = "redis.log"
    unavailable = RedisUnavailable
    output_to_log = False  # redis-server writes its log itself (--logfile)
    poll_interval = 0.05

    def __init__(self, *, host: str = "127.0.0.1", start_timeout: float = 20.0) -> None:
        super().__init__(host=host, start_timeout=start_timeout)

    @property
    def url(self) -> str:
        """The connection URL for redis-py's ``Redis.from_url`` (database 0)."""
        self._require_started()
        return f"redis://{self.host}:{self.port}/0"

    address = url

    def unmet_requirements(self) -> str | None:
        return missing_requirements()

    def serving(self) -> bool:
        return self.port is not None and ping(self.host, self.port)

    def command(self) -> list[str]:
        return [
            redis_server_binary() or "redis-server",
            "--port", str(self.port), "--bind", self.host,
            "--dir", str(self.workdir), "--logfile", str(self.log_path),
            "--daemonize", "no", "--save", "", "--appendonly", "no",
            "--protected-mode", "yes", "--unixsocket", "", "--databases", "16",
        ]
