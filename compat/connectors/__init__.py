"""Sources and sinks that keep the effectively-once promise (docs/stateful.md).

Under ``topology.reliability.mode: EFFECTIVELY_ONCE`` acking is off and a failure rolls
the whole topology back to its newest consistent checkpoint, so a source must be able to
go back to where that checkpoint was taken, and a sink must put into the outside world
exactly what the checkpoints account for. These components do, with streamparse's API:

* :class:`FileSpout`: lines of text files; position (file, byte offset) in state.
* :class:`RedisStreamSpout`: entries of a Redis stream; position (last entry id) in state.
* :class:`KafkaSpout`: records of Kafka topics (Storm's storm-kafka-client semantics;
  positions in state under EFFECTIVELY_ONCE); docs/kafka.md.
* :class:`FileSink`: one line per tuple, in files made visible by rename on commit.
* :class:`RedisSink`: list appends, hash sets or counts, applied with a checkpoint fence
  in one ``MULTI``/``EXEC``.
* :class:`KafkaSink`: Storm's KafkaBolt; one fenced Kafka transaction per checkpoint with
  ``sink.transactional``; docs/kafka.md.

Every setting is a Storm config key ``heron.connectors.<connector>.<setting>``
(:mod:`compat.connectors.config`); a missing or malformed one fails the task at start with
:class:`ConnectorConfigError` naming it::

    from compat.connectors import FileSink, FileSpout

    class Lines(FileSpout):
        config = {"heron.connectors.file.path": "input/*.txt"}

    class Out(FileSink):
        config = {"heron.connectors.file.sink.dir": "output"}

This package imports ``compat.storm_api`` only (never an engine); the Redis components
import the ``redis`` client when they start (the ``redis`` extra), the Kafka components
``confluent_kafka`` (the ``kafka`` extra), and ``KafkaSpout``/``KafkaSink`` are loaded
from :mod:`compat.connectors.kafka` on first use.
"""
from typing import Any

from compat.connectors.config import ConnectorConfigError
from compat.connectors.files import FileSink, FileSpout, committed_files, read_committed
from compat.connectors.redis_io import RedisSink, RedisStreamSpout

__all__ = ["ConnectorConfigError", "FileSink", "FileSpout", "KafkaSink", "KafkaSpout",
           "RedisSink", "RedisStreamSpout", "committed_files", "read_committed"]

_KAFKA = ("KafkaSpout", "KafkaSink")


def __getattr__(name: str) -> Any:
    """``KafkaSpout`` and ``KafkaSink``, imported when first asked for."""
    if name in _KAFKA:
        from compat.connectors import kafka

        return getattr(kafka, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
