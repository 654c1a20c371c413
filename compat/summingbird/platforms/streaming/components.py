"""The spout and bolts every planned Summingbird topology is made of.

Three generic classes run any node: ``SummingbirdSpout`` (a source and the option-maps
fused into it), ``SummingbirdFlatMapBolt`` (maps, flat-maps, joins and writes, fused)
and ``SummingbirdSummerBolt`` (``sum_by_key`` with its cache). ``topology.py`` makes one
subclass per node whose class attributes hold that node's plan (``sb_node``) and the
run's settings (``sb_run``), so the classes are ordinary ``compat.storm_api``
components that both engines host natively.

Every stream has two fields: ``key`` (the element's key in canonical text when a summer
consumes the stream, fields-grouped on; empty otherwise) and ``payload`` (the pickled
``(lineage, element)``, see ``serial.py``). The components never let an element through
the engine's serializer as it is: msgpack knows nothing of sets, sketches or user types.

Reliability: the spout emits every element with its index as the message id and replays
failed ones (up to ``max_replays`` times); bolts anchor what they emit to their input and
ack it after their work is durable (a summer: after its merge committed, see
``ledger.py``). User errors are re-raised after the inputs are failed, so the engines
restart the task as for any bolt; under ``run_streaming`` they are also written to the
run's error directory, which ends the run with the error.
"""

from __future__ import annotations

import collections
import os
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat.storm_api import Bolt, Spout
from compat.storm_api.config import reliability
from compat.storm_api.tuple import Tuple

from ...errors import JobDefinitionError, JobRuntimeError
from ...functions import join_partition, require_summable
from ...sqlite import encode_key
from . import serial
from .ledger import Entry, Ledger, open_ledger
from .planner import JoinOp, PlannedNode, StepOp, WriteOp
from .spool import TAIL, SpoolSink, SpoolWriter

FIELDS = ["key", "payload"]
DEFAULT_MAX_REPLAYS = 10
#: elements a spout reads per ``next_tuple`` while looking for one that passes its filters
_SCAN = 256


@dataclass(frozen=True)
class RunSettings:
    """What the tasks of one run share beyond the plan."""

    #: ledger scope; ``None``: ``summingbird.run.id`` from the config, else the topology name
    run_id: str | None = None
    #: ``run_streaming`` only: where tasks spool sink writes and the tail's outputs
    spool_dir: str | None = None
    #: ``run_streaming`` only: where tasks report errors, so the driver can stop the run
    error_dir: str | None = None
    #: replays of one element before the spout gives up on it
    max_replays: int = DEFAULT_MAX_REPLAYS


def error_text(exc: BaseException) -> str:
    """An exception in one line plus its notes (which name the Summingbird node)."""
    notes = "; ".join(getattr(exc, "__notes__", ()))
    return f"{type(exc).__name__}: {exc}" + (f" ({notes})" if notes else "")


def _note(exc: BaseException, label: str) -> None:
    note = f"in Summingbird node {label}"
    if note not in getattr(exc, "__notes__", ()):
        if sys.version_info >= (3, 11):
            exc.add_note(note)
        else:  # Python 3.10 has no add_note: keep the note where 3.11 would
            # (3.10's BaseException declares no __notes__, the type checker's 3.10 neither)
            exc.__notes__ = [*getattr(exc, "__notes__", ()), note]  # type: ignore[attr-defined]


class _Task:
    """What the three components share: identity, spools, error reports, emitting."""

    sb_node: PlannedNode
    sb_run: RunSettings = RunSettings()
    outputs: Sequence[Any] | None = FIELDS

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self._sb_setup(storm_conf, context)

    def _close(self) -> None:
        self._sb_close()

    def _sb_setup(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        component = context.get("componentid") or self.sb_node.name
        mine = sorted(int(t) for t, c in (context.get("task->component") or {}).items()
                      if c == component)
        task = int(context.get("taskid", mine[0] if mine else 0))
        self.sb_task = task
        self.sb_index = mine.index(task) if task in mine else 0
        self.sb_count = max(1, len(mine))
        self.sb_scope = (self.sb_run.run_id or conf.get("summingbird.run.id")
                         or conf.get("topology.name") or "summingbird")
        spool = self.sb_run.spool_dir
        self.sb_spool = SpoolWriter(spool, component, task) if spool else None
        #: sinks with ``flush()`` that were written to, by ``id`` (sinks need not hash)
        self.sb_flush_sinks: dict[int, Any] = {}
        # Each task writes through its own copy of a sink, on the storm engine's threads as
        # in the heron engine's processes: sinks need not be thread-safe (a lazily opened
        # file is not).
        self.sb_sinks = {op.sink_id: serial.loads(serial.dumps(op.sink, op.label))
                         for op in self.sb_node.ops
                         if isinstance(op, WriteOp) and not isinstance(op.sink, SpoolSink)}
        # Services too: a SQLite service's connection must not be shared by threads.
        self.sb_services = {id(op): serial.loads(serial.dumps(op.service, op.label))
                            for op in self.sb_node.ops if isinstance(op, JoinOp)}

    def _sb_report(self, exc: BaseException) -> None:
        """Leave the error where ``run_streaming`` looks (atomically: it polls)."""
        directory = self.sb_run.error_dir
        if not directory:
            return
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        target = path / f"{self.sb_node.name}.{self.sb_task}"
        tmp = path / f".{target.name}.{os.getpid()}"
        tmp.write_text(error_text(exc) + "\n", encoding="utf-8")
        os.replace(tmp, target)

    def _sb_key(self, element: Any) -> str:
        label = self.sb_node.key_label
        key, _ = require_summable(element, label)
        try:
            return encode_key(key, label)
        except JobDefinitionError as exc:
            raise JobRuntimeError(f"{exc}: the key routes the element to its summer task, so "
                                  "it needs a canonical form") from None

    def _sb_output(self, lineage: tuple[int, ...], element: Any, anchors: list[Tuple]) -> None:
        """Collect the tail's output and emit downstream, if anyone listens."""
        node = self.sb_node
        if not node.emits and not (node.is_tail and self.sb_spool is not None):
            return
        payload = serial.dumps((lineage, element), node.name)
        if node.is_tail and self.sb_spool is not None:
            self.sb_spool.write(TAIL, payload)
        if node.emits:
            key = self._sb_key(element) if node.keyed_output else ""
            # a mixin: the Spout or Bolt after it in the component's bases defines emit
            self.emit([key, payload], anchors=anchors)  # type: ignore[attr-defined]

    def _sb_durable(self) -> None:
        """Make writes survive this process before its inputs are acked."""
        if self.sb_spool is not None:
            self.sb_spool.flush()
        for sink in self.sb_flush_sinks.values():
            sink.flush()

    def _sb_run_ops(self, ops: tuple[Any, ...], lineage: tuple[int, ...],
                    element: Any) -> list[tuple[tuple[int, ...], Any]]:
        """The node's fused operations on one element: ``(lineage, output)`` pairs."""
        items = [(lineage, element)]
        for op in ops:
            if isinstance(op, StepOp):
                step = op.step
                expanded: list[tuple[tuple[int, ...], Any]] = []
                for lin, value in items:
                    outputs = step(value)
                    if op.positional:
                        expanded.extend((lin + (j,), y) for j, y in enumerate(outputs))
                    else:
                        expanded.extend((lin, y) for y in outputs)
                items = expanded
            elif isinstance(op, JoinOp):
                try:
                    items = list(join_partition(self.sb_services[id(op)], op.label, items))
                except Exception as exc:
                    _note(exc, op.label)
                    raise
            elif isinstance(op, WriteOp):
                self._sb_write(op, items)
        return items

    def _sb_write(self, op: WriteOp, items: list[tuple[tuple[int, ...], Any]]) -> None:
        sink = op.sink
        if isinstance(sink, SpoolSink):
            if self.sb_spool is None:
                raise JobRuntimeError(f"{op.label}: a spooled sink outside run_streaming")
            for lin, value in items:
                self.sb_spool.write(sink.sink_id, serial.dumps((lin, value), op.label))
            return
        sink = self.sb_sinks[op.sink_id]
        for _, value in items:
            try:
                sink(value)
            except Exception as exc:
                _note(exc, op.label)
                raise
        if callable(getattr(sink, "flush", None)):
            self.sb_flush_sinks[id(sink)] = sink

    def _sb_close(self) -> None:
        if self.sb_spool is not None:
            self.sb_spool.close()
        for sink in self.sb_sinks.values():
            close = getattr(sink, "close", None)
            if callable(close):
                close()


class SummingbirdSpout(_Task, Spout):
    """Reads a source (every ``count``-th element for task ``index``) and runs its option-maps.

    The message id of an element is its index in the source, so a replay is recognised
    downstream. The spout is exhausted once it has read everything and nothing it emitted
    is still unacked (a fail replays, so it must stay alive until then).
    """

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self._sb_setup(storm_conf, context)
        self._items: Any = None
        self._read_all = False
        self._unacked: dict[int, list[Any]] = {}
        self._fails: collections.Counter[int] = collections.Counter()
        self._replay: collections.deque[int] = collections.deque()

    def next_tuple(self) -> None:
        if self._replay:
            index = self._replay.popleft()
            values = self._unacked.get(index)
            if values is not None:
                self.emit(values, tup_id=index)
            return
        if self._read_all:
            return
        node = self.sb_node
        try:
            if self._items is None:
                # a spout's node is a SOURCE node, which has its source
                self._items = enumerate(node.source.read())  # type: ignore[union-attr]
            for _ in range(_SCAN):
                found = next(self._items, None)
                if found is None:
                    self._read_all = True
                    self._items = None
                    return
                index, element = found
                if index % self.sb_count != self.sb_index:
                    continue
                outputs = self._sb_run_ops(node.ops, (node.source_ordinal, index), element)
                if not outputs:
                    continue
                lineage, value = outputs[0]  # option-maps only: one output at most
                payload = serial.dumps((lineage, value), node.name)
                key = self._sb_key(value) if node.keyed_output else ""
                self._unacked[index] = [key, payload]
                self.emit([key, payload], tup_id=index)
                return
        except Exception as exc:
            _note(exc, node.source_label)
            self._sb_report(exc)
            raise

    def ack(self, tup_id: Any) -> None:
        self._unacked.pop(tup_id, None)
        self._fails.pop(tup_id, None)

    def fail(self, tup_id: Any) -> None:
        if tup_id not in self._unacked:
            return  # emitted by an earlier instance of this task, whose state is gone
        self._fails[tup_id] += 1
        if self._fails[tup_id] > self.sb_run.max_replays:
            exc = JobRuntimeError(
                f"{self.sb_node.source_label}: element {tup_id} failed "
                f"{self.sb_run.max_replays + 1} times (timeouts or failing tasks downstream); "
                "giving up on it")
            assert self.logger is not None  # set up before any ack or fail reaches here
            self.logger.error("%s", exc)
            self._sb_report(exc)
            self.ack(tup_id)
            return
        self._replay.append(tup_id)

    def is_exhausted(self) -> bool:
        return self._read_all and not self._unacked


class SummingbirdFlatMapBolt(_Task, Bolt):
    """Maps, flat-maps, joins and writes, fused; emits each output anchored to its input."""

    auto_ack = False
    auto_anchor = False
    auto_fail = False

    def process(self, tup: Tuple) -> None:
        node = self.sb_node
        try:
            lineage, element = serial.loads(tup.values[1])
            for codes in node.codes_from(tup.component):
                for lin, value in self._sb_run_ops(node.ops, lineage + codes, element):
                    self._sb_output(lin, value, [tup])
            self._sb_durable()
        except Exception as exc:
            self._sb_report(exc)
            self.fail(tup)
            raise
        self.ack(tup)

    def process_tick(self, tup: Tuple) -> None:
        self.ack(tup)


class SummingbirdSummerBolt(_Task, Bolt):
    """``sum_by_key`` into a store, through a cache flushed by size and on tick tuples.

    Inputs are held (not acked) in the cache until a flush has merged them durably; each
    input then yields ``(key, (value before it, its delta))`` downstream, anchored to the
    input: Memory's granularity, whatever the cache size, while the store is written once
    per key per flush. The cache holds up to ``CacheSize`` keys (plus a per-task random
    share of its fuzz, so parallel tasks do not flush together) and is flushed on every
    tick (``FlushFrequency`` seconds). Under at-most-once it is off: nothing would keep a
    bounded run open until its last flush.
    """

    auto_ack = False
    auto_anchor = False
    auto_fail = False

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self._sb_setup(storm_conf, context)
        spec = self.sb_node.summer
        assert spec is not None
        limit = spec.cache_size
        if limit:
            limit = int(limit * (1 + spec.cache_fuzz * random.Random(self.sb_task).random()))
            if not reliability(storm_conf).acking:
                assert self.logger is not None  # initialize runs once the logger is set
                self.logger.info("%s: at-most-once, so the summer cache is off", spec.label)
                limit = 0
        self._limit = limit
        self._ledger: Ledger = open_ledger(
            spec.store, scope=self.sb_scope, summer=self.sb_node.name, task=self.sb_task,
            semigroup=spec.semigroup, label=spec.label,
            keep_previous=self.sb_node.emits or (self.sb_node.is_tail
                                                 and self.sb_spool is not None))
        self._entries: list[Entry] = []
        self._paths: dict[str, tuple[int, ...]] = {}
        self._anchors: dict[str, list[Tuple]] = {}
        self._keys: set[str] = set()
        self._held: list[Tuple] = []

    def process(self, tup: Tuple) -> None:
        node = self.sb_node
        # a summer bolt's node is a summer node, which has its summer
        label = node.summer.label  # type: ignore[union-attr]
        try:
            lineage, element = serial.loads(tup.values[1])
            key, delta = require_summable(element, label)
            key_text = tup.values[0] or encode_key(key, label)
            for codes in node.codes_from(tup.component):
                path = lineage + codes
                text = serial.lineage_text(path)
                held = self._anchors.get(text)
                if held is not None:  # a replay while the first copy is still cached
                    held.append(tup)
                    continue
                self._entries.append(Entry(key, key_text, text, delta))
                self._paths[text] = path
                self._anchors[text] = [tup]
                self._keys.add(key_text)
        except Exception as exc:
            self._sb_report(exc)
            self.fail(tup)
            raise
        self._held.append(tup)
        if len(self._keys) >= self._limit:
            self._flush()

    def process_tick(self, tup: Tuple) -> None:
        self.ack(tup)
        if self._held:
            self._flush()

    def _flush(self) -> None:
        entries, held = self._entries, self._held
        replays = self._ledger.replays
        try:
            previous = self._ledger.merge(entries)
            if self._ledger.replays > replays:
                summer = self.sb_node.summer
                # a summer bolt's node has its summer; the logger is set before any tuple
                assert self.logger is not None and summer is not None
                self.logger.info("%s: %d replayed input(s) had been merged already: not merged "
                                 "again", summer.label, self._ledger.replays - replays)
            for entry, before in zip(entries, previous):
                self._sb_output(self._paths[entry.lineage], (entry.key, (before, entry.delta)),
                                self._anchors[entry.lineage])
            self._sb_durable()
        except Exception as exc:
            self._sb_report(exc)
            for tup in held:
                self.fail(tup)
            self._reset()
            raise
        for tup in held:
            self.ack(tup)
        self._reset()

    def _reset(self) -> None:
        self._entries = []
        self._paths = {}
        self._anchors = {}
        self._keys = set()
        self._held = []

    def _close(self) -> None:
        self._ledger.close()
        self._sb_close()
