"""Fixtures of the tracker tests: a running topology (on the local state manager, shared
by the package; on ZooKeeper, per module), a tracker or UI app served by uvicorn in a
thread of the test process, and an HTTP client.

The topology (``project/``) is spout -> split -> count over two containers with acking;
its spout is slow on purpose, so tests can watch it while it uses little CPU.
"""

from __future__ import annotations

import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from engine.common.launch import StateManagerSpec, Submission

PROJECT = Path(__file__).resolve().parent / "project"
NAME = "tracked"
COMPONENTS = ("sentence_spout", "split_bolt", "count_bolt")
#: what tests give the tracker: fast polls, a short Topology Master timeout
POLL_INTERVAL = 0.5
TM_TIMEOUT = 1.5
#: the access token of the apps ``tracker_app`` makes (engine/common/security/access_token.py)
TOKEN = "test-access-token-0123456789abcdefghijklmnop"


def wait_until(predicate: Callable[[], Any], timeout: float, interval: float = 0.2) -> Any:
    """The first truthy value of ``predicate()`` within ``timeout`` seconds, else its last."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


class ServedApp:
    """An ASGI app served by uvicorn on 127.0.0.1 (a free port) in a daemon thread;
    ``close`` asks the server to exit and waits for it (bounded)."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                                    access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       name="uvicorn-test", daemon=True)

    def start(self, timeout: float = 20.0) -> ServedApp:
        self.thread.start()
        if (
            not wait_until(lambda: self.server.started or not self.thread.is_alive(), timeout, 0.05)
            or not self.server.started
        ):
            self.close()
            raise RuntimeError(f"uvicorn did not start within {timeout}s")
        return self

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)
        self.sock.close()
        assert not self.thread.is_alive(), "uvicorn did not stop within 15s"


@pytest.fixture
def serve() -> Iterator[Callable[[Any], ServedApp]]:
    """``serve(app)`` starts ``app`` in a thread; every app started is stopped after the test."""
    started: list[ServedApp] = []

    def start(app: Any) -> ServedApp:
        served = ServedApp(app).start()
        started.append(served)
        return served

    yield start
    for served in reversed(started):
        served.close()


def client(url: str, token: str | None = TOKEN) -> httpx.Client:
    """An HTTP client of ``url`` sending ``token`` as a bearer token (None: no token)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=url, timeout=30.0, trust_env=False, headers=headers)


@dataclass
class RunningTopology:
    """The tracker tests' topology, running; ``state_spec`` is where its state lives."""

    name: str
    state_spec: StateManagerSpec
    working_dir: Path
    runner: Any

    def location(self) -> Any:
        with self.state_spec.open() as state:
            return state.get("tmanagers", self.name)

    def tmanager_pid(self) -> int:
        """The Topology Master's process, from its pid file."""
        from engine.common.launch import TMANAGER
        from engine.common.process.spawn import read_pid_file

        proc = read_pid_file(self.working_dir / "pids" / f"{TMANAGER}.pid")
        assert proc is not None, f"no live Topology Master pid file in {self.working_dir / 'pids'}"
        return proc.pid


def spout_emitted(state_spec: StateManagerSpec, name: str) -> int:
    from engine.common.security.guard import SocketSecurity
    from engine.common.security.keys import KeysError, keys_from_state
    from engine.tmanager.client import TManagerClient
    from engine.tmanager.client import TManagerUnavailable as Unavailable
    from engine.tools.tracker.logs import working_dir

    with state_spec.open() as state:
        location = state.get("tmanagers", name)
        wd = working_dir(name, state.get("schedulers", name), state.get("pplans", name), None)
        try:
            security = SocketSecurity(keys_from_state(state, name, wd)) if location else None
        except KeysError:  # ZooKeeper without a digest: keys beside the plan, not built yet
            return 0
    if location is None:
        return 0
    try:
        snapshot = TManagerClient(name, location.controller_endpoint, 2.0,
                                  security=security).metrics()
    except Unavailable:
        return 0
    return sum(int(v.get("__emit-count", 0)) for i, v in snapshot.values.items()
               if snapshot.components.get(i) == "sentence_spout")


def start_topology(state_spec: StateManagerSpec | None, working_dir: Path) -> RunningTopology:
    """Submit and start the project's topology; wait until its spout has emitted and every
    instance has reported metrics (so the exception of the splitter has had time to come)."""
    from engine.common.local_run import HeronLocalRun
    from engine.common.submission import load_topology

    loaded = load_topology(PROJECT, name=NAME)
    runner = HeronLocalRun(loaded, Submission(project=str(PROJECT), name=NAME),
                           working_dir=working_dir, state_spec=state_spec)
    runner.start()
    running = RunningTopology(NAME, runner.state_spec, working_dir, runner)
    try:
        assert wait_until(lambda: spout_emitted(runner.state_spec, NAME) > 200, 60, 0.5), \
            f"the topology did not get going; logs in {working_dir / 'logs'}"
    except BaseException:
        runner.stop(drain=0)
        raise
    return running


@pytest.fixture(scope="module")
def local_topology() -> Iterator[RunningTopology]:
    """The topology on the local state manager, shared by one module's tracker tests.

    Module-scoped, not package-scoped: this folder has no ``__init__.py``, so pytest
    would keep a "package" fixture until the end of the whole run, and the topology
    would go on using CPU under every later test (and, on two xdist workers, under the
    other worker's). A module's tests stay together on one worker
    (tests/parallel_groups.py)."""
    saved_path, saved_modules = list(sys.path), set(sys.modules)
    working_dir = Path(tempfile.mkdtemp(prefix="tracker-test-"))
    running = start_topology(StateManagerSpec(kind="local", root=str(working_dir / "state")),
                             working_dir)
    try:
        yield running
    finally:
        running.runner.stop(drain=0)
        shutil.rmtree(working_dir, ignore_errors=True)
        sys.path[:] = saved_path
        for name in set(sys.modules) - saved_modules:
            del sys.modules[name]


def page_link(url: str, path: str, token: str = TOKEN) -> str:
    """The one-time link to a page, as `heron tracker` prints it (sets the cookie)."""
    from engine.tools.cli.serving import link

    return link(url, path, token)


def tracker_app(state_spec: StateManagerSpec, **settings: Any) -> Any:
    from engine.tools.tracker import TrackerSettings, create_app

    options = {"poll_interval": POLL_INTERVAL, "tm_timeout": TM_TIMEOUT, **settings}
    return create_app(state_spec, TrackerSettings(**options), token=TOKEN)
