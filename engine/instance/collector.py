"""The instance's OutputCollector: emits become rows of columnar batches.

Per emit the work is what cannot be avoided: validate, serialize the values once, hash
the grouping fields once per distinct field list of the stream's fields-grouped
consumers, append. Routing happens in the Stream Manager from those columns. Targets
are computed here only when the emitter needs them (``need_task_ids``, direct emits),
with the same grouping code the Stream Manager uses, and then travel as explicit
destinations.

The per-row work (packing a row, hashing its key, encoding the batch) is the tuple
codec's (``engine.common.codec``), and the collector's hot half (``CollectorCore``) is the
component API path's (``api.py`` beside this file, or its compiled twin ``_api.pyx``):
compiled when built, else the pure-Python twins, with the same bytes and errors either
way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from random import getrandbits
from typing import TYPE_CHECKING, Any

from engine.common.codec import selected_module, tuple_codec
from engine.common.grouping import GroupingError
from engine.common.network import type_frame
from engine.common.runtime.errors import AckingError, EmitError
from engine.common.runtime.stats import TaskStats
from engine.common.serialization import MsgpackSerializer, SerializationError
from engine.config.batching import DEFAULT_BATCH_BYTES
from engine.messages import tuple_pb2

_LOG_LEVELS = {0: 5, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR}
TUPLE_BATCH = type_frame(tuple_pb2.TupleBatch)
CONTROL_BATCH = type_frame(tuple_pb2.ControlBatch)
ACK, FAIL = tuple_pb2.ACK, tuple_pb2.FAIL
#: an input registered under acking that belongs to no tuple tree
UNTRACKED = None
_key_hash = tuple_codec.key_hash
_append_key_hashes = tuple_codec.append_key_hashes
_encode_batch = tuple_codec.encode_batch
_encode_control = tuple_codec.encode_control
#: the component API's per-tuple path this process runs (``engine.instance._api``, or its
#: pure twin ``engine.instance.api``)
api_path = selected_module("api")

if TYPE_CHECKING:
    # the checker reads the pure twins (the compiled ones have the same attributes)
    from engine.common.codec.codec import StreamOut
    from engine.instance.api import CollectorCore
else:
    #: One declared output stream of this task and the rows waiting to be sent: the tuple
    #: codec's class (``engine.common.codec``: compiled, or its pure twin
    #: ``codec.StreamOut``), so adding a routed emit's row (``add_packed``) runs compiled
    #: where it is built.
    StreamOut = tuple_codec.StreamOut
    CollectorCore = api_path.CollectorCore


class InstanceCollector(CollectorCore):
    """A task's OutputCollector. Its once-per-tuple half (``emit``, ``ack``, a stock
    spout's and bolt's ``emit``, a bolt's batch and a spout's burst) is the tuple path's
    ``CollectorCore``, compiled where it is built; the rest is here."""

    #: ``sync`` does nothing here: engines may skip the call after each spout command
    syncs_nothing = True

    def __init__(self, component: str, task: int, streams: dict[str, StreamOut],
                 serializer: Any, stats: TaskStats, logger: logging.Logger,
                 send: Callable[[list[bytes]], None], batch_size: int,
                 capture: Any | None, acking: bool = False,
                 batch_bytes: int = DEFAULT_BATCH_BYTES) -> None:
        super().__init__()
        self.component = component
        self.task = task
        self.streams = streams
        self.serializer = serializer
        self._dumps = serializer.dumps
        #: a row and its single grouping key in one pass, when rows are msgpack (the key
        #: hash is always of msgpack bytes, so only then is the key's a slice of the row's)
        self._pack_row_hash = (tuple_codec.pack_row_hash
                               if type(serializer) is MsgpackSerializer else None)
        self.stats = stats
        self.logger = logger
        self._send = send
        self.batch_size = batch_size
        #: a batch is sent once its rows reach this many bytes, whatever their number, so
        #: large values do not make multi-megabyte messages (and backpressure stays fine-grained)
        self.batch_bytes = batch_bytes
        self.capture = capture
        #: spout message ids emitted by the current call (acked at once: at-most-once)
        self.emitted_ids: list[Any] = []
        #: user metrics from report_metric: name -> last value
        self.user_metrics: dict[str, Any] = {}
        self.emitted = 0  # emit calls; see sync_stats
        self._default = streams.get("default")
        #: at-least-once (topology.acker.executors > 0): trees are tracked
        self.acking = acking
        #: spout: its pending trees (the tuple path's table: entered by tracked emits,
        #: settled by ack batches, expired by timeouts, oldest first)
        self.pending_trees = tuple_codec.PendingTable()
        #: bolt: input tuple id -> ((root task, root key)..., this copy's key) or UNTRACKED
        self.inflight: dict[str, Any] = {}
        #: bolt: receive time of sampled inputs (the first of each batch), by tuple id, for
        #: process latency (receipt to ack), and what was measured since the last publish
        self.received: dict[str, float] = {}
        self.process_secs = 0.0
        self.processed = 0
        #: bolt: (ACK or FAIL, (roots, key)) of settled inputs, for the Stream Manager
        self._settled: list[tuple[int, Any]] = []
        #: the routed stream whose batch is open: rows of one task go out in emit order
        #: across its streams, as Heron's instance does (a row on another stream sends the
        #: open batch first) and as Storm delivers them (in order per task pair)
        self._open: StreamOut | None = None
        #: streams a custom grouping subscribes to: this task chooses their destinations,
        #: so their emits take the checked path and their batches name the tasks
        self._chosen = frozenset(name for name, out in streams.items()
                                 if any(getattr(g, "chosen_by_emitter", False)
                                        for g in (out.groupings or ())))
        for name in self._chosen:
            streams[name].slow = True
        for out in streams.values():  # what a routed emit's row needs of this collector
            out.bind(task, self.pending_roots, self._anchor_roots, batch_size, batch_bytes,
                     self._dumps, self._pack_row_hash is not None)

    @property
    def pending_roots(self) -> dict[int, tuple[Any, float]]:
        """The spout's pending trees as the table holds them: root key -> (message id,
        emit time), oldest first."""
        return self.pending_trees.entries

    @property
    def tracks_anchors(self) -> bool:
        """Bolts pass anchor ids only when trees are tracked (see ``Bolt.emit``)."""
        return self.acking

    # -- emits -------------------------------------------------------------------------
    # ``emit`` (a routed or leaf emit, once per tuple) and ``spout_emit`` are the tuple
    # path's (``CollectorCore``); every other emit comes here.
    @staticmethod
    def _add_roots(out: StreamOut, row: int, roots: Any) -> None:
        """The tree columns of row number ``row`` (untracked rows before it count 0)."""
        counts = out.root_counts
        if len(counts) < row:
            counts.extend([0] * (row - len(counts)))
        counts.append(len(roots))
        for task, key in roots:
            out.root_tasks.append(task)
            out.root_keys.append(key)

    def _emit_checked(self, out: StreamOut | None, values: list | tuple, stream: str | None,
                      direct_task: int | None, need_task_ids: bool,
                      tup_id: Any | None, anchors: list | None = None) -> list[int] | None:
        """Every other emit: validated in full, targets computed when asked for."""
        if out is None:
            raise EmitError(
                f"component {self.component!r} task {self.task} emitted to undeclared stream "
                f"{stream!r}; declared streams: {sorted(self.streams)}")
        if len(values) != out.nfields:
            raise EmitError(
                f"component {self.component!r} task {self.task} emitted {len(values)} value(s) "
                f"on stream {out.name!r}, which declares {out.nfields} field(s) "
                f"{list(out.fields)}: {list(values)!r}")
        if (direct_task is not None) != out.direct:
            if out.direct:
                raise EmitError(
                    f"component {self.component!r} task {self.task} emitted without direct_task "
                    f"on direct stream {out.name!r}")
            raise EmitError(
                f"component {self.component!r} task {self.task} emitted with direct_task="
                f"{direct_task} on stream {out.name!r}, which is not declared direct "
                "(declare Stream(..., direct=True))")
        try:
            payload = self._dumps(values)
        except Exception as exc:
            raise self._serialization_error(exc, out, values) from None
        self.emitted += 1
        roots: Any = ()
        if tup_id is not None:
            if self.acking and not out.leaf:
                root = getrandbits(64) or 1
                self.pending_trees.add(root, tup_id, time.monotonic())
                roots = ((self.task, root),)
            else:  # at-most-once, or a tree with nowhere to go: complete at once
                self.emitted_ids.append(tup_id)
        elif anchors and self.acking:
            roots = self._anchor_roots(anchors, out.name)
        if out.captured and self.capture is not None:
            self.capture.record(out.name, values, payload, tup_id)  # a spout's message id
        if out.leaf:
            return [] if need_task_ids else None
        if out is not self._open:
            self._switch_to(out)
        targets: list[int] | None = None
        if need_task_ids or direct_task is not None or out.name in self._chosen:
            targets = []
            try:
                for grouping in out.groupings:
                    targets.extend(grouping.choose(values, direct_task))
            except GroupingError as exc:
                raise EmitError(f"component {self.component!r} task {self.task}: {exc}") from None
            if not out.dest_counts:
                out.dest_counts.extend([0] * len(out.values))
                out.slow = True
            out.dest_counts.append(len(targets))
            out.dest_tasks.extend(targets)
        elif out.dest_counts:
            out.dest_counts.append(0)
        if roots:
            self._add_roots(out, len(out.values), roots)
        elif out.root_counts:
            out.root_counts.append(0)
        out.values.append(payload)
        out.nbytes += len(payload)
        if out.single_key is not None:
            out.hashes.append(_key_hash(values[out.single_key]))
        elif out.key_indices:
            _append_key_hashes(out.hashes, values, out.key_indices)
        if len(out.values) >= self.batch_size or out.nbytes >= self.batch_bytes:
            self.flush_stream(out)
        return targets if need_task_ids else None

    def _switch_to(self, out: StreamOut) -> None:
        """A row for ``out`` follows rows of another stream: send those first."""
        previous = self._open
        if previous is not None and previous.values:
            self.flush_stream(previous)
        self._open = out

    def _serialization_error(self, exc: Exception, out: StreamOut,
                             values: Any) -> SerializationError:
        return SerializationError(
            f"task {self.task} emitted a value the tuple serializer "
            f"({self.serializer.name}) cannot encode: {exc}; values: {list(values)!r}",
            component=self.component, stream=out.name, values=values)

    @property
    def pending(self) -> int:
        """Rows waiting in batches."""
        return sum(len(out.values) for out in self.streams.values())

    def sync_stats(self) -> TaskStats:
        """Counters kept on the collector for speed, copied into the task's stats."""
        self.stats.emitted = self.emitted
        return self.stats

    def flush_stream(self, out: StreamOut) -> None:
        n = len(out.values)
        if not n:
            return
        payload = _encode_batch(self.task, self.component, out.name, out.values,
                                len(out.key_indices), out.hashes, out.dest_counts,
                                out.dest_tasks, out.root_counts, out.root_tasks, out.root_keys)
        if out.key_indices:
            out.hashes = []
        if out.dest_counts:
            out.dest_counts = []
            out.dest_tasks = []
        if out.root_counts:
            out.root_counts = []
            out.root_tasks = []
            out.root_keys = []
        out.values = []
        out.nbytes = 0
        out.slow = out.captured or out.direct or out.name in self._chosen
        self.stats.transferred += n
        self._send([TUPLE_BATCH, payload])

    def flush(self) -> None:
        """Data first, then acks: the Stream Manager must see a bolt's emits anchored to a
        tuple before the ack of that tuple (or the tree could look complete too early)."""
        for out in self.streams.values():
            if out.values:
                self.flush_stream(out)
        if self._settled:
            self._flush_control()

    def _flush_control(self) -> None:
        """The settled inputs as ControlBatch columns, built here in bulk rather than
        per ack."""
        settled, self._settled = self._settled, []
        self._send([CONTROL_BATCH, _encode_control(self.task, settled)])

    # -- acking --------------------------------------------------------------------------
    def _anchor_roots(self, anchors: list, stream: str) -> tuple[tuple[int, int], ...]:
        """The roots of every anchor, each once, in order."""
        inflight = self.inflight
        if len(anchors) == 1:
            entry = inflight.get(anchors[0], self)
            if entry is self:
                raise self._unknown_anchor(anchors[0], stream)
            return entry[0] if entry is not UNTRACKED else ()
        seen: dict[tuple[int, int], None] = {}
        for anchor in anchors:
            entry = inflight.get(anchor, self)
            if entry is self:
                raise self._unknown_anchor(anchor, stream)
            if entry is not UNTRACKED:
                for root in entry[0]:
                    seen[root] = None
        return tuple(seen)

    def _unknown_input(self, tup_id: Any, verb: str) -> AckingError:
        return AckingError(
            f"component {self.component!r} task {self.task} {verb} tuple id {tup_id!r}, "
            "which is unknown or already acked/failed (Storm: \"Acked a non-existent or "
            "already acked/failed id\"); with auto_ack = True do not also call self.ack()")

    def _unknown_anchor(self, anchor: Any, stream: str) -> AckingError:
        return AckingError(
            f"component {self.component!r} task {self.task} anchored an emit on stream "
            f"{stream!r} to tuple id {anchor!r}, which was already acked or failed, or never "
            f"received (Storm: \"Anchored onto {anchor} after ack/fail\"); emit before acking, "
            "or set auto_ack = False when acking by hand")

    def register_input(self, tup_id: str, roots: tuple[tuple[int, int], ...], key: int) -> None:
        """A tuple handed to the bolt under acking: its tree, to ack or fail later."""
        self.inflight[tup_id] = (roots, key) if roots else UNTRACKED

    def sample_received(self, tup_id: str, at: float) -> None:
        """Remember when a sampled input arrived; inputs never acked do not pile up."""
        if len(self.received) >= 1024:
            self.received.clear()
        self.received[tup_id] = at

    def fail(self, tup_id: Any) -> None:
        if self.acking:
            self._settle(tup_id, FAIL, "failed")
        self.stats.failed += 1
        self.received.pop(tup_id, None)

    def _settle(self, tup_id: Any, kind: int, verb: str) -> None:
        entry = self.inflight.pop(tup_id, self)
        if entry is self:
            raise self._unknown_input(tup_id, verb)
        if entry is UNTRACKED:
            return
        settled = self._settled
        settled.append((kind, entry))
        if len(settled) >= self.batch_size:
            self.flush()

    # -- everything else ---------------------------------------------------------------
    def log(self, msg: str, level: int) -> None:
        self.logger.log(_LOG_LEVELS.get(level, logging.INFO), msg)

    def error(self, msg: str) -> None:
        self.stats.errors += 1
        self.stats.last_error = msg.strip().splitlines()[0] if msg.strip() else msg
        self.logger.error(msg)

    def metric(self, name: str, value: Any) -> None:
        self.user_metrics[name] = value

    def sync(self) -> None:
        pass
