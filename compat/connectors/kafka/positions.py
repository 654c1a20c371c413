"""Where a spout task starts reading a partition it was just given.

Outside EFFECTIVELY_ONCE this is Storm's ``KafkaSpout.doSeek``, in terms of the offset the
consumer group committed and whose commit it was:

=====================  ==========================  ===========================  =========
strategy               committed by this topology  committed by someone else    none
=====================  ==========================  ===========================  =========
EARLIEST               the committed offset        the beginning                beginning
LATEST                 the committed offset        the end                      end
UNCOMMITTED_EARLIEST   the committed offset        the committed offset         beginning
UNCOMMITTED_LATEST     the committed offset        the committed offset         end
=====================  ==========================  ===========================  =========

"By this topology" is Storm's ``CommitMetadataManager`` test: the commit's metadata is
Storm's JSON ``{"topologyId": <storm.id>, "taskId": ..., "threadName": ...}`` naming this
submission's ``storm.id``, or (AT_LEAST_ONCE) this task itself committed it since it
started. So EARLIEST and LATEST apply when a topology is first deployed, and a restarted
task resumes from its commit. The metadata is written in Storm's format, so a Storm
topology and this one recognise each other's commits as foreign.

Under EFFECTIVELY_ONCE the position comes from the task's checkpointed state; a partition
the state does not know starts where this submission first started it, recorded once in
Kafka (see :func:`start_group`) so a rollback to empty state does not take LATEST afresh.
"""
from __future__ import annotations

import json
import threading
from typing import Any

__all__ = ["BEGINNING", "END", "commit_metadata", "committed_by", "first_poll_offset",
           "start_group", "recorded_starts"]

#: librdkafka's logical offsets (confluent_kafka.OFFSET_BEGINNING / OFFSET_END)
BEGINNING = -2
END = -1


def commit_metadata(storm_id: str, task_id: Any) -> str:
    """The metadata every commit carries: Storm's CommitMetadata JSON."""
    return json.dumps({"topologyId": storm_id, "taskId": task_id,
                       "threadName": threading.current_thread().name},
                      separators=(",", ":"))


def committed_by(metadata: str | None, storm_id: str) -> bool:
    """Whether commit ``metadata`` names ``storm_id`` (False for anything unreadable, as
    Storm treats commits made by other clients)."""
    if not metadata or not storm_id:
        return False
    try:
        named: object = json.loads(metadata).get("topologyId")
        return named == storm_id
    except (ValueError, AttributeError):
        return False


def first_poll_offset(strategy: str, committed: int | None, ours: bool) -> int:
    """Storm's doSeek: an offset, or :data:`BEGINNING` / :data:`END`.

    ``committed``: the group's committed offset (None when there is none); ``ours``:
    whether this topology made that commit."""
    if committed is not None and committed >= 0:
        if ours or strategy.startswith("UNCOMMITTED_"):
            return committed
        return BEGINNING if strategy == "EARLIEST" else END
    return BEGINNING if strategy in ("EARLIEST", "UNCOMMITTED_EARLIEST") else END


def start_group(storm_id: str, component: str) -> str:
    """The consumer group whose committed offsets record, under EFFECTIVELY_ONCE, where
    each partition was first started in submission ``storm_id``: written once (the first
    start of a partition in the submission), read by every later start with no position
    in state. Tied to the submission by its name, so it needs no commit metadata (which
    some brokers drop) and a new submission resolves LATEST afresh."""
    return f"heron-start-{storm_id}-{component}"


def recorded_starts(consumer: Any, recorder: Any, topic_partition: Any,
                    partitions: list[tuple[str, int]], strategy: str, metadata: str,
                    timeout: float) -> dict[tuple[str, int], int]:
    """EFFECTIVELY_ONCE: the start of each partition in this submission, as numbers.

    ``recorder`` is a consumer of the :func:`start_group`: a partition it has a committed
    offset for starts there (this submission started it before: a rollback to empty
    state, a restart). The others are resolved now, from the spout's own group
    (``consumer``: its committed offset for the UNCOMMITTED_ strategies) and the
    watermarks (beginning: low, end: high), and recorded before anything is emitted.
    """
    TP = topic_partition
    starts: dict[tuple[str, int], int] = {}
    fresh = []
    for tp in recorder.committed([TP(t, p) for t, p in partitions], timeout=timeout):
        if tp.offset >= 0:
            starts[(tp.topic, tp.partition)] = tp.offset
        else:
            fresh.append((tp.topic, tp.partition))
    if not fresh:
        return starts
    group = {(tp.topic, tp.partition): tp.offset for tp in consumer.committed(
        [TP(t, p) for t, p in fresh], timeout=timeout)}
    for tp in fresh:
        committed = group.get(tp, -1)
        start = first_poll_offset(strategy, committed if committed >= 0 else None, False)
        if start in (BEGINNING, END):
            low, high = consumer.get_watermark_offsets(TP(*tp), timeout=timeout)
            start = low if start == BEGINNING else high
        starts[tp] = start
    recorder.commit(offsets=[TP(t, p, starts[(t, p)], metadata=metadata) for t, p in fresh],
                    asynchronous=False)
    return starts
