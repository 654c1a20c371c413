"""Records to tuple values: Storm's ``DefaultRecordTranslator`` or the user's callable.

The default emits ``[topic, partition, offset, key, value]`` (fields ``topic``,
``partition``, ``offset``, ``key``, ``value``: a bolt reading field 0 gets the topic, as
under Storm). ``heron.connectors.kafka.spout.record.translator: "module:callable"`` names
a function of one :class:`Record` returning the list of values, or None to emit nothing
(the record is then acked, as Storm's null tuples are, unless ``spout.emit.null.tuples``).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

from .errors import KafkaConnectorError
from .settings import key

__all__ = ["Record", "default_translator", "load_translator"]


class Record(NamedTuple):
    """One decoded Kafka record, what a translator is given."""

    topic: str
    partition: int
    offset: int
    key: Any
    value: Any
    timestamp: int | None = None
    headers: list[Any] | None = None


def default_translator(record: Record) -> list[Any]:
    """Storm's DefaultRecordTranslator: topic, partition, offset, key, value."""
    return [record.topic, record.partition, record.offset, record.key, record.value]


def load_translator(spec: str, component: str) -> Callable[[Record], Any]:
    """The translator ``spec`` names: ``default`` or ``module:callable`` (imported now, so
    a wrong name fails the task at start naming the key)."""
    if spec == "default":
        return default_translator
    module_name, _, attr = spec.partition(":")
    where = f"{component}: config key {key('spout.record.translator')!r}"
    if not module_name or not attr:
        raise KafkaConnectorError(f"{where} must be 'default' or 'module:callable', not {spec!r}")
    try:
        target: object = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise KafkaConnectorError(f"{where}: cannot load {spec!r} ({exc})") from None
    if not callable(target):
        raise KafkaConnectorError(f"{where}: {spec!r} is not callable")
    return target
