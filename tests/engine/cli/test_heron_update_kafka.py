"""`heron update` of a KafkaSpout's parallelism, 2 -> 3 -> 1, on a running
effectively-once topology (real processes, a real broker; issue 39).

Kafka (3 partitions) -> a running count per word in keyed state -> FileSink, submitted
to the local cluster. Input keeps arriving between the updates. Each update rolls the
topology back to its newest consistent checkpoint; the spout's per-task state (the next
offset of every partition) is shared out by ``KafkaSpout.rescale_state``, and the new
tasks, each dealt its round-robin share of the partitions, seek to those positions. At
the end the committed output holds every running count of every word exactly once:
nothing read twice, nothing skipped.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest

from compat.connectors import read_committed
from engine.statemgr import open_state_manager
from tests.e2e.heron.helpers import wait_until
from tests.e2e.kafka.kafka_io import produce, sentences, word_counts
from tests.engine.cli.conftest import heron

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "kafka" / "projects" / "kafka"
sys.path.insert(0, str(PROJECT / "src"))
PARTITIONS = 3


def log_tails(home: Path, name: str, lines: int = 12) -> str:
    out = []
    for path in sorted((home / "topologies" / name / "logs").glob("*.log")):
        if path.stem.startswith(("stmgr", "heron-tmanager")) or "_sentences_" in path.stem:
            text = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(text))
    return "\n".join(out)


def test_a_kafka_spout_rescaled_2_3_1_reads_every_record_exactly_once(
        kafka_broker, real_engine, sweep, live_processes, isolated_imports, tmp_path):
    name = "exact_counts"
    topic = kafka_broker.create_topic(f"rescale-{uuid.uuid4().hex[:8]}", PARTITIONS)
    out = tmp_path / "out"
    batches = [sentences(600, seed) for seed in range(10, 13)]
    produce(kafka_broker.bootstrap, topic, batches[0], partitions=PARTITIONS)

    def committed_lines() -> list[str]:
        return read_committed(out) if out.exists() else []

    def why() -> str:
        return log_tails(real_engine, name)

    submitted = heron("submit", "local", str(PROJECT), "-n", name,
                      "-o", f"heron.connectors.kafka.bootstrap.servers={kafka_broker.bootstrap}",
                      "-o", f"heron.connectors.kafka.spout.topics={topic}",
                      "-o", f"heron.connectors.file.sink.dir={out}")
    assert submitted.exit_code == 0, submitted.output
    sent = len(batches[0])
    try:
        with open_state_manager("local", root=real_engine / "state") as state:

            def spout_tasks() -> int:
                pplan = state.get("pplans", name)
                return sum(1 for i in pplan.instances
                           if i.info.component_name == "sentences") if pplan else 0

            for step, tasks in enumerate((3, 1), start=1):
                seen = len(committed_lines())
                assert wait_until(lambda: len(committed_lines()) > seen, timeout=60), \
                    f"nothing committed before update {step}\n" + why()
                resized = heron("update", name, "--component-parallelism", f"sentences:{tasks}")
                assert resized.exit_code == 0, resized.output
                assert wait_until(lambda: spout_tasks() == tasks, timeout=60), \
                    f"the physical plan never ran {tasks} spout tasks\n" + why()
                produce(kafka_broker.bootstrap, topic, batches[step], partitions=PARTITIONS,
                        first_key=sent)
                sent += len(batches[step])
            total = sum(word_counts(batch).total() for batch in batches)
            assert wait_until(lambda: len(committed_lines()) >= total, timeout=90), \
                f"{len(committed_lines())} of {total} counts committed\n" + why()
            shown = heron("metrics", name, "--json")
            figures = json.loads(shown.output) if shown.exit_code == 0 else {}
            checkpoints = next((int(v["__checkpoints-completed"]) for k, v in figures.items()
                                if "__checkpoints-completed" in v), 0)
            # a little longer: anything committed twice would show now
            wait_until(lambda: False, timeout=2)
    finally:
        killed = heron("kill", name)
        wait_until(lambda: not live_processes(), timeout=30)
    assert killed.exit_code == 0, killed.output
    lines = [tuple(json.loads(line)) for line in committed_lines()]
    expected = word_counts(line for batch in batches for line in batch)
    got, want = Counter(lines), Counter((w, n) for w, total in expected.items()
                                        for n in range(1, total + 1))
    assert got == want, (f"{sum((want - got).values())} counts lost, e.g. "
                         f"{sorted(want - got)[:5]}; {sum((got - want).values())} twice, e.g. "
                         f"{sorted(got - want)[:5]}")
    assert checkpoints >= 1
