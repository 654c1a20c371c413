"""KafkaSink: Storm's ``KafkaBolt`` on confluent-kafka, with an effectively-once mode.

See docs/kafka.md for the settings and the guarantee of each mode.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from compat.connectors.config import checkpoint_number, task_slice
from compat.storm_api.state import TwoPhaseCommitBolt
from compat.storm_api.tuple import Tuple

from .client import kafka, new_producer, wait_for_brokers
from .serde import serializer
from .settings import sink_settings
from .transactional import TransactionalWriter, fence_group

__all__ = ["KafkaSink"]

log = logging.getLogger(__name__)

#: what the producer gets unless producer.properties says otherwise
PRODUCER_DEFAULTS = {"acks": "all", "enable.idempotence": True, "linger.ms": 5}


class KafkaSink(TwoPhaseCommitBolt):
    """Writes each tuple as one Kafka record (Storm's ``KafkaBolt``; docs/kafka.md).

    The record's key and value are the tuple's ``key`` and ``message`` fields (Storm's
    ``FieldNameBasedTupleToKafkaMapper``; no key field: a null key), its topic
    ``sink.topic`` or the tuple's ``sink.topic.field`` (a tuple naming no topic is acked
    and skipped with a warning, as Storm's KafkaBolt does).

    * At-least-once and at-most-once topologies: records are produced asynchronously
      (idempotent producer, ``acks=all``); a tuple is acked in the delivery callback once
      the broker confirmed its record, and failed on a delivery error (so its spout
      replays it). Callbacks run inside ``producer.poll()``, called on every tuple and on
      the tick tuples this bolt asks for every second. ``sink.fire.and.forget`` acks at
      once instead.
    * EFFECTIVELY_ONCE: everything produced is flushed before each checkpoint is taken, so
      every record a checkpoint accounts for is in Kafka: at-least-once output (a rollback
      writes the replayed records again).
    * EFFECTIVELY_ONCE with ``sink.transactional``: exactly-once output for
      ``read_committed`` readers: a checkpoint interval's records are kept in state as
      the prepared transaction and written, once the checkpoint is consistent, in one
      Kafka transaction fenced against a second write (transactional.py).
    """

    outputs: list[Any] = []
    auto_ack = False
    #: ticks drive the delivery callbacks when no tuple comes
    config = {"topology.tick.tuple.freq.secs": 1}

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        inputs: Any = None,
        par: int | dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> Any:
        """Declare the sink; its class ``config`` (the tick frequency) stays under ``config``."""
        return super().spec(name=name, inputs=inputs, par=par,
                            config={**(cls.config or {}), **(config or {})})

    @classmethod
    def preflight(cls, name: str, conf: dict[str, Any]) -> None:
        """Before the topology starts (engine/common/plan/preflight.py): the settings and a
        broker answering; raises ConnectorConfigError naming the key."""
        from .preflight import check_sink

        check_sink(cls, name, conf)

    def _setup(self) -> None:
        if getattr(self, "_settings", None) is not None:
            return
        s = self._settings = sink_settings(self)
        self._name = self.component_name or type(self).__name__
        self._ck = kafka(self._name)
        self._encode_key = serializer(s.key_serializer)
        self._encode_value = serializer(s.value_serializer)
        self._indexes: dict[tuple[Any, str], tuple[int | None, int | None, int | None]] = {}
        self._records: list[list[Any]] = []
        self._errors: list[str] = []
        self._last_warning = 0.0
        self._task_index = task_slice(self)[0]
        self._transactional = s.transactional and s.effectively_once
        self._writer: TransactionalWriter | None = None
        self._producer = new_producer(self._name, s.bootstrap_servers, s.producer_properties,
                                      PRODUCER_DEFAULTS)
        wait_for_brokers(self._producer, self._name, s.bootstrap_servers, s.start_timeout_ms)

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self._setup()

    # -- tuples ---------------------------------------------------------------------
    def _field_indexes(self, tup: Tuple) -> tuple[int | None, int | None, int | None]:
        """Where the key, message and topic fields are in tuples of ``tup``'s stream."""
        source = (tup.component, tup.stream)
        found = self._indexes.get(source)
        if found is None:
            fields = getattr(tup.values, "_fields", None)
            if fields is None:
                declared = ((self.context or {}).get("source->stream->fields") or {})
                fields = (declared.get(tup.component) or {}).get(tup.stream) or []
            fields = list(fields)
            s = self._settings

            def find(name: str) -> int | None:
                return fields.index(name) if name in fields else None

            found = self._indexes[source] = (find(s.key_field), find(s.message_field),
                                             find(s.topic_field) if s.topic_field else None)
        return found

    def process(self, tup: Tuple) -> None:
        self._setup()
        s = self._settings
        key_at, message_at, topic_at = self._field_indexes(tup)
        if message_at is None:  # Storm reports the error and fails the tuple
            self._warn(f"{self._name}: tuple from {tup.component}/{tup.stream} has no field "
                       f"{s.message_field!r} (config key "
                       "'heron.connectors.kafka.sink.message.field'): failed")
            self.fail(tup)
            return
        values = tup.values
        topic = values[topic_at] if topic_at is not None else None
        topic = topic or s.topic
        if not topic:
            self._warn(f"{self._name}: tuple {tup.id!r} names no topic (field "
                       f"{s.topic_field!r}) and sink.topic is not set: skipped")
            self.ack(tup)
            return
        key = values[key_at] if key_at is not None else None
        message = values[message_at]
        if self._transactional:
            self._records.append([topic, key, message])
            return
        producer = self._producer
        if s.effectively_once:
            self._produce(lambda: producer.produce(
                topic, key=self._encode_key(key), value=self._encode_value(message),
                on_delivery=self._delivered_in_checkpoint))
        elif s.fire_and_forget:
            if self._produce(lambda: producer.produce(
                    topic, key=self._encode_key(key), value=self._encode_value(message)), tup):
                self.ack(tup)
        else:
            self._produce(lambda: producer.produce(
                topic, key=self._encode_key(key), value=self._encode_value(message),
                on_delivery=lambda error, _msg: self._delivered(tup, error)), tup)
        producer.poll(0)

    def _produce(self, send: Callable[[], None], tup: Tuple | None = None) -> bool:
        """Call ``send``; wait (serving callbacks) while the producer's queue is full. A
        record the client refuses (too large...) fails ``tup`` (returns False) or, without
        one, raises."""
        deadline = time.monotonic() + self._settings.start_timeout_ms / 1000.0
        while True:
            try:
                send()
                return True
            except BufferError:
                if time.monotonic() > deadline:
                    raise
                self._producer.poll(0.05)
            except self._ck.KafkaException as exc:
                if tup is None:
                    raise
                self._warn(f"{self._name}: the producer refused the record of tuple "
                           f"{tup.id!r}: {exc.args[0].str() if exc.args else exc}")
                self.fail(tup)
                return False

    def _delivered(self, tup: Tuple, error: Any) -> None:
        if error is None:
            self.ack(tup)
        else:
            self._warn(f"{self._name}: delivery of tuple {tup.id!r} failed: {error.str()}")
            self.fail(tup)

    def _delivered_in_checkpoint(self, error: Any, msg: Any) -> None:
        if error is not None:
            self._errors.append(f"{msg.topic()}: {error.str()}")

    def process_tick(self, tup: Tuple) -> None:
        self._setup()
        self._producer.poll(0)
        self.ack(tup)

    def _warn(self, message: str) -> None:
        now = time.monotonic()
        if now - self._last_warning >= 1.0:
            self._last_warning = now
            log.warning("%s", message)

    # -- checkpoints (EFFECTIVELY_ONCE) ------------------------------------------------
    def begin(self) -> None:
        self._setup()
        self._records = []

    def pre_commit(self, checkpoint_id: str) -> Any:
        """Flush what was produced (failing the checkpoint on a delivery error), or, when
        transactional, hand over the interval's records as the prepared transaction."""
        if not self._transactional:
            remaining = self._producer.flush(self._settings.start_timeout_ms / 1000.0)
            if remaining or self._errors:
                errors, self._errors = self._errors, []
                raise RuntimeError(
                    f"{self._name}: checkpoint {checkpoint_id}: "
                    + (f"{remaining} record(s) not delivered in time" if remaining else
                       f"{len(errors)} record(s) failed, first: {errors[0]}"))
            return None
        if not self._records:
            return None
        prepared = {"records": self._records,
                    "fence": fence_group(self._settings.transactional_id_prefix,
                                         self._task_index)}
        self._records = []
        return prepared

    def commit(self, checkpoint_id: str, prepared: Any) -> None:
        """Write a prepared transaction unless its fence shows it written (idempotent)."""
        if not prepared:
            return
        self._setup()
        number = checkpoint_number(checkpoint_id)
        if number is None:
            raise ValueError(f"{self._name}: checkpoint id {checkpoint_id!r} does not end in "
                             "a number; the fence cannot order it")
        s = self._settings
        if self._writer is None:
            self._writer = TransactionalWriter(
                self._name, s.bootstrap_servers, s.producer_properties,
                f"{s.transactional_id_prefix}-{self._task_index}", s.start_timeout_ms)
        records = [(topic, self._encode_key(key), self._encode_value(message))
                   for topic, key, message in prepared["records"]]
        self._writer.commit(number, records, prepared["fence"], self._produce)

    def abort(self) -> None:
        self._records = []

    def _close(self) -> None:
        producer = getattr(self, "_producer", None)
        if producer is not None:
            producer.flush(5)
        writer = getattr(self, "_writer", None)
        if writer is not None:
            writer.close()
            self._writer = None
