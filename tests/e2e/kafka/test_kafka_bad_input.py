"""Bad Kafka input stops `heron run` before anything starts, with one line naming the
setting and exit code 2 (issue 39): no broker at ``bootstrap.servers``, a topic that does
not exist. (A record that cannot be decoded is counted and skipped at run time:
tests/compat/connectors/kafka/test_spout.py; bad Flux files: tests/compat/flux.)"""

from __future__ import annotations

import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent / "projects" / "kafka"

pytestmark = pytest.mark.timeout(60)


def heron_run(*options: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.tools.cli.main", "run", str(PROJECT), "-n",
                           "exact_counts", "-t", "20", *options],
                          capture_output=True, text=True, timeout=50, cwd=cwd)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_no_broker_at_bootstrap_servers_is_one_line_and_exit_2(tmp_path):
    address = f"127.0.0.1:{closed_port()}"
    done = heron_run("-o", f"heron.connectors.kafka.bootstrap.servers={address}",
                     "-o", "heron.connectors.kafka.spout.topics=words",
                     "-o", f"heron.connectors.file.sink.dir={tmp_path / 'out'}", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "heron.connectors.kafka.bootstrap.servers" in lines[0] and address in lines[0]
    assert "launching" not in done.stderr


def test_a_topic_that_does_not_exist_is_one_line_and_exit_2(kafka_broker, tmp_path):
    missing = f"no-such-topic-{uuid.uuid4().hex[:6]}"
    done = heron_run("-o", f"heron.connectors.kafka.bootstrap.servers={kafka_broker.bootstrap}",
                     "-o", f"heron.connectors.kafka.spout.topics={missing}",
                     "-o", f"heron.connectors.file.sink.dir={tmp_path / 'out'}", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert missing in lines[0] and "heron.connectors.kafka.spout.topics" in lines[0]
