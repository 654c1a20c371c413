"""KafkaSpout: Storm's storm-kafka-client spout on confluent-kafka, with our state.

See docs/kafka.md for the settings and the guarantee of each mode; the pieces live beside
this module: which partitions (partitions.py), where to start (positions.py), what may be
committed (offsets.py), when to retry (retry.py), how records become values (serde.py,
translator.py), the lag metrics (lag.py) and the AT_LEAST_ONCE acking and commits
(at_least_once.py).
"""
from __future__ import annotations

import logging
import time
from typing import Any

from compat.connectors.config import task_slice
from compat.storm_api.spout import Spout
from compat.storm_api.state import HashMapState, State, StatefulComponent

from .at_least_once import AtLeastOnce
from .bounded import read_to_end
from .client import kafka, new_consumer, wait_for_brokers
from .errors import KafkaTopicError
from .lag import lag_metrics
from .offsets import OffsetManager
from .partitions import discover, round_robin
from .positions import (
    BEGINNING,
    END,
    commit_metadata,
    committed_by,
    first_poll_offset,
    recorded_starts,
    start_group,
)
from .retry import RetrySchedule
from .serde import deserializer
from .settings import key, spout_settings
from .translator import Record, load_translator

__all__ = ["KafkaSpout"]

log = logging.getLogger(__name__)

#: records taken from librdkafka's queue per next_tuple call
BATCH = 500
#: the longest a partition refresh waits for metadata (it runs inside next_tuple, every
#: spout.partition.refresh.period.ms; a refresh that times out is tried again next period)
REFRESH_TIMEOUT_SECS = 1.0


class KafkaSpout(StatefulComponent, AtLeastOnce, Spout):
    """Emits the records of Kafka topics (Storm's ``KafkaSpout``; docs/kafka.md).

    Each task reads its round-robin share of the topics' partitions (``consumer.assign``),
    re-dealt every ``spout.partition.refresh.period.ms``. The guarantee is
    ``spout.processing.guarantee`` (Storm's ``ProcessingGuarantee``):

    * AT_LEAST_ONCE (default): each tuple carries the message id ``(topic, partition,
      offset)``; the group's offsets are committed every ``spout.offset.commit.period.ms``
      up to the lowest un-acked offset only, and only counted committed once the broker
      confirmed; failed tuples are re-read (seek) after an exponential backoff; a
      partition with ``spout.max.uncommitted.offsets`` polled but uncommitted offsets is
      paused until commits catch up.
    * AT_MOST_ONCE: the positions are committed (synchronously) after each poll, before
      the records are emitted, without ids.
    * NO_GUARANTEE: emitted without ids; the polled positions are committed asynchronously
      every commit period.

    Under ``topology.reliability.mode: EFFECTIVELY_ONCE`` acking is off and nothing is
    committed to the group: the next offset of every partition lives in this task's
    state, a restored task seeks back to it, and ``rescale_state`` gives every new task
    all old positions (each uses those of the partitions it is then dealt).
    """

    outputs = ["topic", "partition", "offset", "key", "value"]

    #: where the positions live in the task's state: [[topic, partition, next offset]...]
    POSITIONS_KEY = "heron.connectors.kafka.spout.positions"
    #: the metric counting records that could not be decoded or translated
    UNDECODABLE_METRIC = "kafkaSpout/undecodableRecords"
    #: seconds between two lag reports, and at least between two "cannot decode" log lines
    lag_report_secs = 5.0
    log_interval_secs = 1.0

    state: State

    @classmethod
    def spec(cls, name: str | None = None, par: int | dict[str, Any] | None = None,
             config: dict[str, Any] | None = None) -> Any:
        """Declare the spout; ``spout.output.fields`` / ``spout.output.stream`` in ``config``
        (or the class's) decide what it declares, as Storm's translator does."""
        from compat.storm_api.dsl import Stream
        from compat.storm_api.dsl.component import (
            PYTHON_COMMAND,
            PythonSpoutSpec,
            ShellSpoutSpec,
            _python_script,
        )

        merged = {**(cls.config or {}), **(config or {})}
        fields = merged.get(key("spout.output.fields"))
        stream = merged.get(key("spout.output.stream")) or "default"
        if not fields and stream == "default":
            return super().spec(name=name, par=par, config=config)
        fields = [fields] if isinstance(fields, str) else list(fields or cls.outputs)
        spec = PythonSpoutSpec.__new__(PythonSpoutSpec)
        ShellSpoutSpec.__init__(spec, cls, name=name, command=PYTHON_COMMAND,
                                script=_python_script(cls), par=par, config=config,
                                outputs=[Stream(fields=fields, name=stream)])
        return spec

    @classmethod
    def preflight(cls, name: str, conf: dict[str, Any]) -> None:
        """Before the topology starts (engine/common/plan/preflight.py): the settings, a broker
        answering, the named topics there; raises ConnectorConfigError naming the key."""
        from .preflight import check_spout

        check_spout(cls, name, conf)

    def init_state(self, stateful_state: State) -> None:
        """Keep the state; the positions in it are read in ``initialize``."""
        self.state = stateful_state

    # -- start --------------------------------------------------------------------
    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        if not hasattr(self, "state"):
            self.state = HashMapState()
        s = self.settings = spout_settings(self)
        self._name = self.component_name or type(self).__name__
        self._index, self._count = task_slice(self)
        self._translate = load_translator(s.translator, self._name)
        self._decode_key = deserializer(s.key_deserializer)
        self._decode_value = deserializer(s.value_deserializer)
        self._stream = None if s.output_stream == "default" else s.output_stream
        self._null_values = [None] * len(s.output_fields)
        conf = storm_conf or {}
        self._storm_id = str(conf.get("storm.id") or conf.get("topology.name") or "")
        self._metadata = commit_metadata(self._storm_id, self.task_id)
        self._mode = "EFFECTIVELY_ONCE" if s.effectively_once else s.guarantee
        self._alo = self._mode == "AT_LEAST_ONCE"
        props = dict(s.consumer_properties)
        props.setdefault("group.id", f"heron-{conf.get('topology.name') or 'topology'}-"
                                     f"{self._name}")
        props.setdefault("auto.offset.reset", "earliest")
        self._group = props["group.id"]
        self._ck = kafka(self._name)
        self._consumer = new_consumer(self._name, s.bootstrap_servers, props,
                                      **{"enable.auto.commit": False,
                                         "enable.auto.offset.store": False,
                                         "on_commit": self._on_commit})
        self._managers: dict[tuple[str, int], OffsetManager] = {}
        self._pending: set[tuple[str, int, int]] = set()
        self._fails: dict[tuple[str, int, int], int] = {}
        self._retry = RetrySchedule(s.retry_initial_ms, s.retry_period_ms,
                                    s.retry_max_delay_ms, s.retry_max_retries)
        self._seeked: dict[tuple[str, int], tuple[int, float]] = {}
        self._paused: set[tuple[str, int]] = set()
        self._held: dict[tuple[str, int], int] = {}
        self._in_flight = False
        self._positions: dict[tuple[str, int], int] = {}
        for topic, partition, offset in self.state.get(self.POSITIONS_KEY) or []:
            self._positions[(str(topic), int(partition))] = int(offset)
        self._assigned: list[tuple[str, int]] = []
        #: where each assigned partition was started (an offset, BEGINNING or END)
        self._starts_at: dict[tuple[str, int], int] = {}
        self._ended = False
        self.undecodable = 0
        self._last_log = 0.0
        self._suppressed = 0
        metadata = wait_for_brokers(self._consumer, self._name, s.bootstrap_servers,
                                    s.start_timeout_ms)
        self._refresh(metadata, initial=True)
        now = time.monotonic()
        self._next_commit = now + s.commit_period_ms / 1000.0
        self._next_refresh = now + s.refresh_period_ms / 1000.0
        self._next_lag = now + self.lag_report_secs

    def _refresh(self, metadata: Any = None, initial: bool = False) -> None:
        """Deal the partitions again; start the new ones, let go of the revoked ones."""
        s = self.settings
        if metadata is not None:
            topics = metadata.topics
        elif s.pattern is None:
            # only the named topics: a cluster's full metadata can take longer than a
            # refresh may block next_tuple
            topics = {}
            for name in s.topics:
                topics.update(self._consumer.list_topics(
                    topic=name, timeout=REFRESH_TIMEOUT_SECS).topics)
        else:
            topics = self._consumer.list_topics(timeout=REFRESH_TIMEOUT_SECS).topics
        found, missing = discover(topics, s.topics, s.pattern)
        if missing:
            where = f"{key('bootstrap.servers')}={s.bootstrap_servers!r}"
            if initial:
                raise KafkaTopicError(
                    f"{self._name}: topic {missing[0]!r} (config key {key('spout.topics')!r}) "
                    f"does not exist at {where}; create it, or subscribe with "
                    f"{key('spout.topic.pattern')!r} to wait for topics")
            log.warning("%s: topic %r is missing at %s; keeping the current assignment",
                        self._name, missing[0], where)
            return
        mine = round_robin(found, self._index, self._count)
        if mine == self._assigned:
            return
        mine_set, old_set = set(mine), set(self._assigned)
        revoked = [tp for tp in self._assigned if tp not in mine_set]
        added = [tp for tp in mine if tp not in old_set]
        starts = self._starts(added, initial)
        TP = self._ck.TopicPartition
        if revoked:
            if self._alo:
                self._commit_acked()
            self._consumer.incremental_unassign([TP(t, p) for t, p in revoked])
            for tp in revoked:
                self._managers.pop(tp, None)
                self._paused.discard(tp)
            gone = set(revoked)
            self._pending = {m for m in self._pending if m[:2] not in gone}
            self._retry.retain(lambda m: m[:2] not in gone)
        if added:
            self._consumer.incremental_assign([TP(t, p, starts[(t, p)]) for t, p in added])
            self._starts_at.update(starts)  # for the lag of a partition not read from yet
        self._assigned = mine
        log.info("%s task %s reads %d partition(s): %s", self._name, self.task_id, len(mine),
                 ", ".join(f"{t}/{p}" for t, p in mine))

    def _starts(self, added: list[tuple[str, int]], initial: bool) -> dict[tuple[str, int], int]:
        """The first offset (or BEGINNING/END) of each newly dealt partition."""
        if not added:
            return {}
        if self._mode == "EFFECTIVELY_ONCE":
            return self._effectively_once_starts(added)
        TP = self._ck.TopicPartition
        timeout = self.settings.start_timeout_ms / 1000.0
        committed = self._consumer.committed([TP(t, p) for t, p in added], timeout=timeout)
        starts = {}
        for tp in committed:
            key_ = (tp.topic, tp.partition)
            manager = self._managers.get(key_)
            ours = ((self._alo and manager is not None and manager.committed_once)
                    or committed_by(tp.metadata, self._storm_id))
            offset = tp.offset if tp.offset >= 0 else None
            start = first_poll_offset(self.settings.strategy, offset, ours)
            starts[key_] = start
            if self._alo:
                self._managers[key_] = OffsetManager(start if start >= 0 else None)
        return starts

    def _effectively_once_starts(self, added: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Positions from state; for partitions it lacks, the start this submission first
        took (recorded in its start group), or else resolve and record it now."""
        starts = {tp: self._positions[tp] for tp in added if tp in self._positions}
        unknown = [tp for tp in added if tp not in starts]
        if unknown:
            s = self.settings
            recorder = new_consumer(self._name, s.bootstrap_servers, s.consumer_properties,
                                    **{"group.id": start_group(self._storm_id, self._name),
                                       "enable.auto.commit": False})
            try:
                starts.update(recorded_starts(
                    self._consumer, recorder, self._ck.TopicPartition, unknown, s.strategy,
                    self._metadata, s.start_timeout_ms / 1000.0))
            finally:
                recorder.close()
            for tp in unknown:
                self._positions[tp] = starts[tp]
        return starts

    # -- the loop -------------------------------------------------------------------
    def next_tuple(self) -> None:
        if self._ended:
            return
        now = time.monotonic()
        if now >= self._next_commit:
            self._next_commit = now + self.settings.commit_period_ms / 1000.0
            if self._alo:
                self._commit_acked()
            elif self._mode == "NO_GUARANTEE":
                self._commit_positions(asynchronous=True)
        if now >= self._next_refresh:
            self._next_refresh = now + self.settings.refresh_period_ms / 1000.0
            try:
                self._refresh()
            except self._ck.KafkaException as exc:
                log.warning("%s: partition refresh failed (%s); trying again later",
                            self._name, exc)
        if now >= self._next_lag:
            self._next_lag = now + self.lag_report_secs
            self.report_lag()
        if self._alo:
            if len(self._retry):
                self._seek_retries(now)
            self._limit_uncommitted()
            self._held = {}
        records = self._consumer.consume(BATCH, 0)
        if not records:
            first = self._consumer.poll(self.settings.poll_timeout_ms / 1000.0)
            if first is None:
                if self.settings.finite:
                    self._end_if_read()
                return
            records = [first, *self._consumer.consume(BATCH - 1, 0)]
        if self._mode == "AT_MOST_ONCE" and not self._commit_before_emit(records):
            return
        for record in records:
            if record.error() is None:
                self._emit_record(record)
            else:
                self._record_error(record)

    def _emit_record(self, record: Any) -> None:
        topic, partition, offset = record.topic(), record.partition(), record.offset()
        tp = (topic, partition)
        manager = None
        if self._alo:
            manager = self._managers.get(tp)
            if manager is None:
                return  # revoked meanwhile
            msg_id = (topic, partition, offset)
            if (msg_id in self._pending or manager.is_acked(offset)
                    or (manager.committed is not None and offset < manager.committed)):
                return  # read again after a seek back for a retry
            if self._retry.is_scheduled(msg_id):
                if not self._retry.is_ready(msg_id):
                    return
                self._retry.remove(msg_id)
            elif tp in self._paused or manager.uncommitted >= self.settings.max_uncommitted:
                self._hold_back(tp, offset)  # a new offset beyond max.uncommitted.offsets
                return
            manager.track(offset)
        try:
            values = self._translate(Record(
                topic, partition, offset, self._decode_key(record.key()),
                self._decode_value(record.value()), record.timestamp()[1], record.headers()))
        except Exception as exc:  # a poison record: counted, logged, skipped
            self._undecodable(record, exc)
            values = None
            if manager is not None:
                manager.ack(offset)
            self._positions[tp] = offset + 1
            return
        self._positions[tp] = offset + 1
        if values is None:
            if not self.settings.emit_null_tuples:
                if manager is not None:
                    manager.ack(offset)
                return
            values = self._null_values
        if manager is not None:
            self._pending.add(msg_id)
            self.emit(values, tup_id=msg_id, stream=self._stream)
        else:
            self.emit(values, stream=self._stream)

    def _undecodable(self, record: Any, exc: Exception) -> None:
        self.undecodable += 1
        self.report_metric(self.UNDECODABLE_METRIC, self.undecodable)
        now = time.monotonic()
        if now - self._last_log < self.log_interval_secs:
            self._suppressed += 1
            return
        more = f" ({self._suppressed} more since the last line)" if self._suppressed else ""
        self._last_log, self._suppressed = now, 0
        log.warning("%s: skipped record %s/%d@%d that cannot be decoded or translated: %s: %s%s",
                    self._name, record.topic(), record.partition(), record.offset(),
                    type(exc).__name__, exc, more)

    def _record_error(self, record: Any) -> None:
        error = record.error()
        if error.code() == self._ck.KafkaError._PARTITION_EOF:
            return
        now = time.monotonic()
        if now - self._last_log >= self.log_interval_secs:
            self._last_log = now
            log.warning("%s: consumer error on %s/%s: %s", self._name, record.topic(),
                        record.partition(), error.str())

    # -- the other modes ------------------------------------------------------------
    def _commit_positions(self, asynchronous: bool,
                          positions: dict[tuple[str, int], int] | None = None) -> None:
        TP = self._ck.TopicPartition
        positions = self._positions if positions is None else positions
        assigned = set(self._assigned)
        offsets = [TP(t, p, o, metadata=self._metadata) for (t, p), o in positions.items()
                   if (t, p) in assigned]
        if offsets:
            self._consumer.commit(offsets=offsets, asynchronous=asynchronous)

    def _commit_before_emit(self, records: list[Any]) -> bool:
        """AT_MOST_ONCE: commit the polled positions before emitting; on failure seek back
        so the records are read again later, and emit nothing now."""
        after: dict[tuple[str, int], int] = {}
        first: dict[tuple[str, int], int] = {}
        for r in records:
            if r.error() is None:
                tp = (r.topic(), r.partition())
                after[tp] = r.offset() + 1
                first.setdefault(tp, r.offset())
        try:
            self._commit_positions(False, after)
            return True
        except self._ck.KafkaException as exc:
            log.warning("%s: commit before emit failed (%s); reading again", self._name, exc)
            for (t, p), offset in first.items():
                try:
                    self._consumer.seek(self._ck.TopicPartition(t, p, offset))
                except self._ck.KafkaException:
                    pass
            return False

    # -- state, metrics, end ------------------------------------------------------------
    def pre_save(self, checkpoint_id: str) -> None:
        self.state[self.POSITIONS_KEY] = [[t, p, o] for (t, p), o in
                                          sorted(self._positions.items())]

    @staticmethod
    def rescale_state(states: list[Any], new_parallelism: int) -> list[dict[str, Any]]:
        """Every new task gets every old task's positions (the furthest, should two know a
        partition); each then reads from those of the partitions it is dealt."""
        merged: dict[tuple[str, int], int] = {}
        for state in states:
            for topic, partition, offset in (state or {}).get(KafkaSpout.POSITIONS_KEY) or []:
                tp = (str(topic), int(partition))
                merged[tp] = max(int(offset), merged.get(tp, int(offset)))
        positions = [[t, p, o] for (t, p), o in sorted(merged.items())]
        return [{KafkaSpout.POSITIONS_KEY: [list(x) for x in positions]}
                for _ in range(new_parallelism)]

    def report_lag(self) -> dict[str, int]:
        """Report the lag metrics now (also every ``lag_report_secs``); returns them."""
        TP = self._ck.TopicPartition
        readings = []
        for tp in self._assigned:
            position = self._positions.get(tp)
            manager = self._managers.get(tp)
            committed = manager.committed if manager is not None else None
            low, end = self._consumer.get_watermark_offsets(TP(*tp), cached=True)
            if end is None or end < 0:
                continue
            if position is None and committed is None:
                # nothing read from it yet: all from where it starts is still to read
                start = self._starts_at.get(tp)
                if start is None:
                    continue
                position = end if start == END else (low if start == BEGINNING else start)
                if position is None or position < 0:
                    continue
            current = position if position is not None else committed
            assert current is not None  # neither known was handled above
            readings.append((tp[0], tp[1], end, current, committed))
        metrics = lag_metrics(readings)
        for name, value in metrics.items():
            self.report_metric(name, value)
        self.report_metric(self.UNDECODABLE_METRIC, self.undecodable)
        return metrics

    def _end_if_read(self) -> None:
        """``spout.finite``: end once every partition is read to its end and, under
        AT_LEAST_ONCE, every tuple acked and its offset committed (so a restart of the
        topology finds nothing left to read)."""
        if not read_to_end(self._consumer, self._ck.TopicPartition, self._assigned):
            return
        if self._alo:
            if self._pending or len(self._retry):
                return
            if any(m.next_commit_offset() is not None for m in self._managers.values()):
                self._commit_acked()  # now, not at the next commit period
                return
        elif self._mode in ("AT_MOST_ONCE", "NO_GUARANTEE"):
            self._commit_positions(asynchronous=False)
        self._ended = True
        self.report_lag()
        log.info("%s task %s read its partitions to their end (spout.finite)", self._name,
                 self.task_id)

    def is_exhausted(self) -> bool:
        return self._ended

    def deactivate(self) -> None:
        if self._alo:
            self._commit_acked()

    def _close(self) -> None:
        consumer = getattr(self, "_consumer", None)
        if consumer is None:
            return
        try:
            if self._alo:
                self._in_flight = False
                self._commit_acked()  # close() waits for it
        finally:
            self._consumer = None
            consumer.close()
