"""A real, throw-away ZooKeeper server for tests, run from Debian's ``zookeeper`` jars.

Why a real server and not a fake: the ZooKeeper state manager's value is in the
behaviour only a server has (ephemeral nodes tied to a session, session expiry,
connection loss), so its tests must talk to one. Each server gets its own temporary
directory (zoo.cfg, data, log), a port found by binding port 0, short tick and session
bounds so tests can use ~2 s sessions, and runs in its own process group so stop() can
take down the JVM and anything it started. The JVM is also told to die with the
process that started it (PR_SET_PDEATHSIG), so a killed test run leaves no server.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

#: The ZooKeeper jar of Debian's ``zookeeper`` package; its manifest's Class-Path names
#: the dependency jars, so it is the only one the classpath needs (plus a logger).
ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
#: An slf4j binding so the server's log says something; optional.
SLF4J_SIMPLE_JAR = Path("/usr/share/java/slf4j-simple.jar")
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

_PR_SET_PDEATHSIG = 1


class ZooKeeperUnavailable(RuntimeError):
    """Java or the ZooKeeper jars are not installed (the test should be skipped)."""


def missing_requirements() -> str | None:
    """Why a server cannot be started here, or None when it can."""
    if shutil.which("java") is None:
        return "java is not installed (apt-get install zookeeper brings it)"
    if not ZOOKEEPER_JAR.is_file():
        return f"{ZOOKEEPER_JAR} is missing (apt-get install zookeeper)"
    return None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now at ``host`` (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def four_letter_word(host: str, port: int, word: str, timeout: float = 1.0) -> str:
    """Send one of ZooKeeper's four-letter commands and return its answer ('' on failure)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(word.encode())
            sock.shutdown(socket.SHUT_WR)
            chunks = []
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks).decode(errors="replace")
    except OSError:
        return ""


def _die_with_parent_hook() -> Callable[[], None] | None:
    """A preexec_fn that has the kernel SIGKILL the child when its parent exits.

    prctl is looked up here, in the parent, so the hook run between fork and exec only
    calls one C function (no imports or allocations while other threads may hold locks).
    """
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the line above took effect
            os._exit(1)

    return hook


class _PortTaken(Exception):
    """The chosen port was taken before the server could bind it."""


class ZooKeeperServer:
    """One standalone ZooKeeper on 127.0.0.1 at a free port; ``hosts`` is "127.0.0.1:PORT".

    ``host`` picks another address of this machine to listen on (only that one), e.g. the
    bridge address of a tests.slurm.SlurmCluster, so processes in its nodes'
    network namespaces can reach the server."""

    def __init__(self, *, host: str = "127.0.0.1", start_timeout: float = 30.0,
                 tick_ms: int = 200, min_session_ms: int = 400,
                 max_session_ms: int = 10000) -> None:
        self.start_timeout = start_timeout
        self.tick_ms = tick_ms
        self.min_session_ms = min_session_ms
        self.max_session_ms = max_session_ms
        self.host = host
        self.port: int | None = None
        self.workdir: Path | None = None
        self.proc: subprocess.Popen | None = None

    @property
    def hosts(self) -> str:
        """The connect string to give kazoo or ``--zk``."""
        if self.port is None:
            raise RuntimeError("ZooKeeperServer is not started")
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    @property
    def log_path(self) -> Path | None:
        return None if self.workdir is None else self.workdir / "zookeeper.log"

    def log_tail(self, lines: int = 30) -> str:
        """The end of the server's log, for failure messages."""
        path = self.log_path
        if path is None or not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def serving(self) -> bool:
        """True once the server answers 'imok' and also serves requests ('ruok' alone
        answers before the database is loaded)."""
        if self.port is None:
            return False
        if not four_letter_word(self.host, self.port, "ruok").startswith("imok"):
            return False
        return "Mode:" in four_letter_word(self.host, self.port, "srvr")

    def _write_config(self) -> Path:
        assert self.workdir is not None and self.port is not None
        data = self.workdir / "data"
        data.mkdir(exist_ok=True)
        config = self.workdir / "zoo.cfg"
        config.write_text("\n".join([
            f"tickTime={self.tick_ms}",
            f"minSessionTimeout={self.min_session_ms}",
            f"maxSessionTimeout={self.max_session_ms}",
            f"dataDir={data}",
            f"clientPortAddress={self.host}",
            f"clientPort={self.port}",
            "admin.enableServer=false",
            "4lw.commands.whitelist=ruok,srvr",
            "maxClientCnxns=0",
            "",
        ]))
        return config

    def start(self) -> ZooKeeperServer:
        """Start the server and wait until it serves requests; raise with its log otherwise.

        The port is free when chosen but another process may take it before the JVM binds
        it, so a start that fails with "Address already in use" is tried again on a new
        port (a few times)."""
        why = missing_requirements()
        if why:
            raise ZooKeeperUnavailable(why)
        if self.proc is not None:
            raise RuntimeError("ZooKeeperServer already started")
        for attempt in range(3):
            try:
                return self._start_once()
            except _PortTaken:
                if attempt == 2:
                    raise RuntimeError("ZooKeeper: every port tried was taken") from None
        raise AssertionError("unreachable")

    def _start_once(self) -> ZooKeeperServer:
        self.workdir = Path(tempfile.mkdtemp(prefix="heron-zk-"))
        self.port = free_port(self.host)
        config = self._write_config()
        classpath = [str(ZOOKEEPER_JAR)]
        if SLF4J_SIMPLE_JAR.is_file():
            classpath.append(str(SLF4J_SIMPLE_JAR))
        command = [
            shutil.which("java") or "java",
            "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Dzookeeper.jmx.log4j.disable=true",
            "-Dzookeeper.admin.enableServer=false",
            "-cp", os.pathsep.join(classpath), MAIN_CLASS, str(config),
        ]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=self.workdir, start_new_session=True,
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
                raise RuntimeError(f"ZooKeeper exited with {returncode} while starting; "
                                   f"log:\n{tail}")
            if self.serving():
                return self
            time.sleep(0.1)
        tail = self.log_tail()
        hosts = self.hosts
        self.stop()
        raise RuntimeError(f"ZooKeeper at {hosts} did not answer within "
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
            # The group may hold other processes even after its leader exited.
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

    def __enter__(self) -> ZooKeeperServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
