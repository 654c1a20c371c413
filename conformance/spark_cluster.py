"""A real Spark standalone cluster on this machine: a master and N workers, started from
the installed pyspark distribution, for tests and benchmarks of the diff on a cluster.

It is the cluster a user runs (``spark://HOST:PORT``), shrunk onto loopback: the master
and each worker are ``spark-class org.apache.spark.deploy.{master.Master,worker.Worker}``
JVMs in the foreground (no daemon scripts: pyspark's wheel ships ``bin/spark-class`` but
not ``sbin/start-master.sh``), each in its own process group, on free ports, with
``SPARK_LOCAL_IP=127.0.0.1``, ``PYSPARK_PYTHON`` the running interpreter, one core and
modest memory per worker, logs, work and pid directories under ``root``. :meth:`stop`
ends exactly those process groups (the workers' executors and their Python workers are
in them), by pid, and waits for them.

The captures a diff reads must be where every executor can read them: here every worker
shares this machine's filesystem, which is what a shared path (NFS, a mounted bucket)
gives a real cluster.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["ClusterError", "StandaloneCluster", "application_executors", "free_port",
           "spark_home"]


class ClusterError(RuntimeError):
    """The cluster did not come up (names the daemon and its log)."""


def free_port() -> int:
    """A TCP port on loopback nobody listens on now (bound to 0, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spark_home() -> Path:
    """``$SPARK_HOME``, or the installed pyspark package (which carries bin/ and jars/)."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    import pyspark

    return Path(pyspark.__file__).resolve().parent


class StandaloneCluster:
    """A standalone master and ``workers`` workers (``cores`` cores and ``memory`` each)."""

    def __init__(self, root: Path, *, workers: int = 2, cores: int = 1,
                 memory: str = "1g") -> None:
        self.root = Path(root)
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.master_port = free_port()
        self.webui_port = free_port()
        self.master_url = f"spark://127.0.0.1:{self.master_port}"
        self.status_url = f"http://127.0.0.1:{self.webui_port}/json/"
        self.processes: list[subprocess.Popen] = []
        self._logs: list[IO[bytes]] = []

    @property
    def pids(self) -> list[int]:
        """The master's and workers' JVM pids."""
        return [p.pid for p in self.processes]

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
                   PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                   SPARK_LOG_DIR=str(self.root / "logs"), SPARK_PID_DIR=str(self.root / "pids"),
                   SPARK_WORKER_DIR=str(self.root / "work"), SPARK_NO_DAEMONIZE="1")
        return env

    def _spawn(self, name: str, *args: str) -> None:
        log = open(self.root / "logs" / f"{name}.log", "ab")
        self._logs.append(log)
        cmd = [str(spark_home() / "bin" / "spark-class"), *args]
        proc = subprocess.Popen(cmd, env=self._env(), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        self.processes.append(proc)
        (self.root / "pids" / f"{name}.pid").write_text(str(proc.pid))

    def start(self, timeout: float = 90.0) -> None:
        """Start the master, then the workers; return once every worker is ALIVE."""
        for sub in ("logs", "pids", "work"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        try:
            self._spawn("master", "org.apache.spark.deploy.master.Master",
                        "--host", "127.0.0.1", "--port", str(self.master_port),
                        "--webui-port", str(self.webui_port))
            self._wait(lambda s: True, timeout, "the master")
            for n in range(self.workers):
                work = self.root / "work" / f"worker-{n}"
                work.mkdir(parents=True, exist_ok=True)
                self._spawn(f"worker-{n}", "org.apache.spark.deploy.worker.Worker",
                            "--host", "127.0.0.1", "--port", str(free_port()),
                            "--webui-port", str(free_port()), "--cores", str(self.cores),
                            "--memory", self.memory, "--work-dir", str(work),
                            self.master_url)
            self._wait(lambda s: sum(w.get("state") == "ALIVE"
                                     for w in s.get("workers", [])) >= self.workers,
                       timeout, f"{self.workers} workers")
        except BaseException:
            self.stop()
            raise

    def status(self) -> dict[str, Any]:
        """The master's JSON status (workers with their cores in use, applications)."""
        with urllib.request.urlopen(self.status_url, timeout=5) as response:
            return json.loads(response.read().decode())

    def worker_of(self, executor: dict[str, Any]) -> str | None:
        """The id of the worker that runs ``executor`` (an entry of
        :func:`application_executors`), or None for the driver. Every worker here shares
        one host, so the executor's log links (served by its worker's web UI) tell them
        apart: they start with the worker's ``webuiaddress`` from the master's status."""
        links = list((executor.get("executorLogs") or {}).values())
        for worker in self.status().get("workers", []):
            address = str(worker.get("webuiaddress") or "").rstrip("/")
            if address and any(str(link).startswith(address + "/") for link in links):
                return str(worker["id"])
        return None

    def _wait(self, ready: Callable[[dict[str, Any]], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for proc in self.processes:
                if proc.poll() is not None:
                    raise ClusterError(f"a Spark daemon (pid {proc.pid}) exited with "
                                       f"{proc.returncode}; logs in {self.root / 'logs'}")
            try:
                if ready(self.status()):
                    return
            except OSError:
                pass
            time.sleep(0.3)
        raise ClusterError(f"{what} not up within {timeout:g}s; logs in {self.root / 'logs'}")

    def stop(self, timeout: float = 20.0) -> None:
        """End the workers (and their executors), then the master; nothing stays."""
        for proc in reversed(self.processes):
            _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in reversed(self.processes):
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            _signal_group(proc.pid, signal.SIGKILL)  # what remains of the group
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.processes.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)  # the group this class created for the daemon
    except (ProcessLookupError, PermissionError):
        pass


def application_executors(spark: SparkSession, settle: float = 10.0) -> list[dict[str, Any]]:
    """The running application's executors as its UI's REST API reports them
    (``/api/v1/applications/<id>/executors``: ``id``, ``totalInputBytes``,
    ``executorLogs``...), once no task is active and the figures stopped changing (the
    status listener lags the jobs a little), or after ``settle`` seconds. The session
    must run with ``spark.ui.enabled=true``."""
    sc = spark.sparkContext
    base = sc.uiWebUrl
    if not base:
        raise ClusterError("the application has no web UI: start the session with "
                           "spark.ui.enabled=true to read its REST API")
    url = f"{base.rstrip('/')}/api/v1/applications/{sc.applicationId}/executors"
    deadline = time.monotonic() + settle
    last: list[dict[str, Any]] | None = None
    while True:
        with urllib.request.urlopen(url, timeout=5) as response:
            executors = json.loads(response.read().decode())
        figures = [(e.get("id"), e.get("totalInputBytes"), e.get("activeTasks"))
                   for e in executors]
        if last is not None and figures == [(e.get("id"), e.get("totalInputBytes"),
                                             e.get("activeTasks")) for e in last] \
                and not any(e.get("activeTasks") for e in executors):
            return executors
        if time.monotonic() >= deadline:
            return executors
        last = executors
        time.sleep(0.5)
