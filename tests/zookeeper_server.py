"""A real, throw-away ZooKeeper server for tests, run from Debian's ``zookeeper`` jars.

Why a real server and not a fake: the ZooKeeper state manager's value is in the
behaviour only a server has (ephemeral nodes tied to a session, session expiry,
connection loss), so its tests must talk to one. Each server gets its own temporary
directory (zoo.cfg, data, log), a port found by binding port 0, short tick and session
bounds so tests can use ~2 s sessions, and runs in its own process group so stop() can
take down the JVM and anything it started. The JVM is also told to die with the
process that started it (PR_SET_PDEATHSIG), so a killed test run leaves no server
(tests/local_server.py, shared with tests/redis_server.py).
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

# Imported from here by other test helpers (tests/slurm/daemons.py).
from tests.local_server import LocalServer, _die_with_parent_hook, free_port  # noqa: F401

#: The ZooKeeper jar of Debian's ``zookeeper`` package; its manifest's Class-Path names
#: the dependency jars, so it is the only one the classpath needs (plus a logger).
ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
#: An slf4j binding so the server's log says something; optional.
SLF4J_SIMPLE_JAR = Path("/usr/share/java/slf4j-simple.jar")
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"


class ZooKeeperUnavailable(RuntimeError):
    """Java or the ZooKeeper jars are not installed (the test should be skipped)."""


def missing_requirements() -> str | None:
    """Why a server cannot be started here, or None when it can."""
    if shutil.which("java") is None:
        return "java is not installed (apt-get install zookeeper brings it)"
    if not ZOOKEEPER_JAR.is_file():
        return f"{ZOOKEEPER_JAR} is missing (apt-get install zookeeper)"
    return None


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


class ZooKeeperServer(LocalServer):
    """One standalone ZooKeeper on 127.0.0.1 at a free port; ``hosts`` is "127.0.0.1:PORT".

    ``host`` picks another address of this machine to listen on (only that one), e.g. the
    bridge address of a tests.slurm.SlurmCluster, so processes in its nodes'
    network namespaces can reach the server."""

    service = program = "ZooKeeper"
    workdir_prefix = "heron-zk-"
    log_name = "zookeeper.log"
    unavailable = ZooKeeperUnavailable
    output_to_log = True  # the JVM's output is the log
    poll_interval = 0.1

    def __init__(self, *, host: str = "127.0.0.1", start_timeout: float = 30.0,
                 tick_ms: int = 200, min_session_ms: int = 400,
                 max_session_ms: int = 10000) -> None:
        super().__init__(host=host, start_timeout=start_timeout)
        self.tick_ms = tick_ms
        self.min_session_ms = min_session_ms
        self.max_session_ms = max_session_ms

    @property
    def hosts(self) -> str:
        """The connect string to give kazoo or ``--zk``."""
        self._require_started()
        return f"{self.host}:{self.port}"

    address = hosts

    def unmet_requirements(self) -> str | None:
        return missing_requirements()

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

    def command(self) -> list[str]:
        config = self._write_config()
        classpath = [str(ZOOKEEPER_JAR)]
        if SLF4J_SIMPLE_JAR.is_file():
            classpath.append(str(SLF4J_SIMPLE_JAR))
        return [
            shutil.which("java") or "java",
            "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Dzookeeper.jmx.log4j.disable=true",
            "-Dzookeeper.admin.enableServer=false",
            "-cp", os.pathsep.join(classpath), MAIN_CLASS, str(config),
        ]
