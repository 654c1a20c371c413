"""Storm's own Kafka topology, declared in Flux, unchanged on both engines (issue 39).

``examples/kafka_wordcount/flux/kafka_wordcount.yaml`` is what a Storm user deploys with
``storm jar ... org.apache.storm.flux.Flux``: Storm's ``KafkaSpout`` built from a
``KafkaSpoutConfig$Builder``, Python multilang bolts (pystorm) under Flux's shell
wrappers, and Storm's ``KafkaBolt`` with a ``java.util.Properties``, a topic selector and
a field mapper. ``heron run FILE.yaml --filter FILE.properties`` runs it against the test
broker (the properties name it and fresh topics); the counts the bolt writes to Kafka
must be the input's, word for word, on each engine.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.e2e.heron.helpers import wait_until
from tests.e2e.kafka.kafka_io import produce, read_topic, sentences, word_counts

REPO = Path(__file__).resolve().parents[3]
FLUX = REPO / "examples" / "kafka_wordcount" / "flux"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def newest_counts(bootstrap: str, topic: str) -> dict[str, int]:
    best: dict[str, int] = {}
    for _, _, word, count in read_topic(bootstrap, topic, 1, idle=0.8):
        best[word] = max(best.get(word, 0), int(count))
    return best


@pytest.mark.parametrize("engine", ["storm", "heron"])
def test_the_flux_kafka_word_count_counts_exactly_on_each_engine(kafka_broker, tmp_path,
                                                                  engine):
    bootstrap = kafka_broker.bootstrap
    tag = uuid.uuid4().hex[:8]
    source = kafka_broker.create_topic(f"sentences-{tag}", 3)
    target = kafka_broker.create_topic(f"counts-{tag}", 1)
    lines = sentences(400, seed=11)
    produce(bootstrap, source, lines, partitions=3)
    flux = tmp_path / "flux"
    shutil.copytree(FLUX, flux, ignore=shutil.ignore_patterns("logs", "__pycache__"))
    properties = tmp_path / "test.properties"
    properties.write_text(
        f"kafka.bootstrap.servers = {bootstrap}\nkafka.input.topic = {source}\n"
        f"kafka.output.topic = {target}\nkafka.group.id = flux-{tag}\n"
        "max.spout.pending = 500\n", encoding="utf-8")
    expected = dict(word_counts(lines))
    command = [sys.executable, "-m", "engine.tools.cli.main", "run",
               str(flux / "kafka_wordcount.yaml"),
               "--filter", str(properties), "--engine", engine, "--json",
               "-t", "25" if engine == "heron" else "15"]
    # the run ends at its time limit (a Kafka topic has no end); the counts must all be
    # in Kafka well before it
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        reached = wait_until(lambda: newest_counts(bootstrap, target) == expected, timeout=40,
                             interval=2.0)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["reason"] == "time limit", summary
    assert summary["components"]["sentences"]["emitted"] == len(lines)
    assert reached, (
        f"{engine}: counts in Kafka differ from the input's: "
        f"{sorted(set(newest_counts(bootstrap, target).items()) ^ set(expected.items()))[:5]}"
        f"\n{err[-2000:]}"
    )
