"""One Kafka transaction per checkpoint, written at most once: the transactional sink's writer.

``KafkaSink`` with ``sink.transactional`` keeps a checkpoint interval's records in its state
as the prepared transaction and hands them here once the checkpoint is consistent. The
records are produced in one Kafka transaction together with a **fence**: the offset
``<checkpoint number>`` committed, inside the same transaction
(``send_offsets_to_transaction``), for the consumer group ``heron-fence-<prefix>-<task>``
on partition 0 of the transaction's first topic. Before writing, the writer reads that
committed offset: when it already reaches the checkpoint, the transaction was committed
before (a re-commit after a restore) and nothing is written. Records and fence become
visible together or not at all, so a replay never writes twice.

The producer's ``transactional.id`` is ``<prefix>-<task index>``, stable across restarts:
``init_transactions`` fences a previous producer of the task (a zombie can no longer
commit) and aborts the transaction it left open.

Needs from the broker: transactions (Kafka 0.11+; on a real cluster
``transaction.state.log.replication.factor`` and ``transaction.state.log.min.isr`` must be
satisfiable by the brokers there are) and consumers of the output reading with
``isolation.level=read_committed`` (librdkafka's default), or they also see aborted records.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .client import kafka, new_consumer, new_producer

__all__ = ["TransactionalWriter", "fence_group"]


def fence_group(prefix: str, task_index: int) -> str:
    """The consumer group whose committed offset is a sink task's last committed checkpoint."""
    return f"heron-fence-{prefix}-{task_index}"


class TransactionalWriter:
    """A transactional producer for one sink task, and the fence reads it needs."""

    def __init__(self, component: str, servers: str, properties: dict[str, Any],
                 transactional_id: str, timeout_ms: int) -> None:
        self._ck = kafka(component)
        self._component = component
        self._servers = servers
        self._properties = properties
        self._timeout = timeout_ms / 1000.0
        self.transactional_id = transactional_id
        self._producer = new_producer(component, servers, properties,
                                      {"acks": "all", "enable.idempotence": True},
                                      **{"transactional.id": transactional_id})
        self._producer.init_transactions(self._timeout)
        self._fences: dict[str, Any] = {}

    def _fence_consumer(self, group: str) -> Any:
        consumer = self._fences.get(group)
        if consumer is None:
            consumer = self._fences[group] = new_consumer(
                self._component, self._servers, {}, **{"group.id": group,
                                                       "enable.auto.commit": False})
        return consumer

    def committed_checkpoint(self, group: str, topic: str) -> int | None:
        """The checkpoint number the fence ``group`` holds on ``topic``/0, or None."""
        TP = self._ck.TopicPartition
        [tp] = self._fence_consumer(group).committed([TP(topic, 0)], timeout=self._timeout)
        return tp.offset if tp.offset >= 0 else None

    def commit(self, number: int, records: list[tuple[str, bytes | None, bytes | None]],
               group: str, produce_retry: Callable[[Callable[[], None]], object]) -> bool:
        """Write ``records`` and the fence ``number`` in one transaction, unless the fence
        shows checkpoint ``number`` committed; True when it wrote."""
        if not records:
            return False
        fence_topic = records[0][0]
        done = self.committed_checkpoint(group, fence_topic)
        if done is not None and done >= number:
            return False
        producer, TP = self._producer, self._ck.TopicPartition
        producer.begin_transaction()
        try:
            for topic, key, value in records:
                produce_retry(functools.partial(producer.produce, topic, key=key, value=value))
            producer.send_offsets_to_transaction(
                [TP(fence_topic, 0, number)],
                self._fence_consumer(group).consumer_group_metadata(), self._timeout)
            producer.commit_transaction(self._timeout)
        except Exception:
            try:
                producer.abort_transaction(self._timeout)
            except self._ck.KafkaException:
                pass  # fenced or fatal: the next init_transactions aborts it
            raise
        return True

    def close(self) -> None:
        for consumer in self._fences.values():
            consumer.close()
        self._fences.clear()
        self._producer.flush(self._timeout)
