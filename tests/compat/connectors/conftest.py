"""Fixtures for the connectors' tests: one real redis-server for the whole run.

The server is session-scoped here, not in tests/conftest.py, because only these tests use
it; move it there (it is written to be moved as is) once tests elsewhere need Redis (the
engine's stateful end-to-end tests with the Redis sink will).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import SESSION_SERVICE_PIDS
from tests.unavailable import unavailable


@pytest.fixture(scope="session")
def redis_server() -> Iterator[object]:
    """A real redis-server on 127.0.0.1 shared by the whole run (started on first use).

    Yields a ``tests.redis_server.RedisServer``; ``redis_server.url`` is what
    ``heron.connectors.redis.url`` takes. Skipped only when Debian's redis-server is not
    installed and HERON_TEST_REQUIRE_ALL is not 1 (scripts/install-test-deps.sh installs
    it); the redis client itself is a test dependency (pyproject's ``test`` extra).
    """
    from tests.redis_server import RedisServer, missing_requirements

    why = missing_requirements()
    if why:
        unavailable(f"no Redis server available: {why}")
    server = RedisServer()
    try:
        server.start()
        SESSION_SERVICE_PIDS.add(server.pid)
        yield server
    finally:
        pid = server.pid
        server.stop()
        SESSION_SERVICE_PIDS.discard(pid)


@pytest.fixture
def redis_url(redis_server) -> Iterator[str]:
    """The shared server's URL, its database emptied before the test (tests run one at a
    time, so each starts from nothing)."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    client.close()
    yield redis_server.url
