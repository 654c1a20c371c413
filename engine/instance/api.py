"""The component API's per-tuple path in pure Python: the reference the compiled twin
(``_api.pyx``) must match call for call and error for error, and the fallback where it is
not built.

Per tuple, a streamparse component crosses the API four times: the spout's ``emit``
(``Spout.emit``, then the collector's ``emit``), the bolt's delivery (the ``Tuple`` built,
``process`` called, the auto-``ack``), and the bolt's own ``emit`` (``Bolt.emit`` with its
auto-anchoring, then the collector's). Written as the Storm API layers them, that is five
or six Python frames per tuple for work that is a handful of checks. Here each crossing is
one call, with the same checks in the same order:

* ``CollectorCore``: the instance collector's hot half (``engine.instance.collector``
  subclasses it and keeps everything else): ``emit`` (a routed or leaf emit, with the
  collector's ``_emit_checked`` for every other one), ``ack``, and ``spout_emit``, which is
  ``Spout.emit`` and ``emit`` in one call, installed as a stock spout's ``emit``;
* ``BoltEmit``: ``Bolt.emit`` and the collector's ``emit`` in one call, installed as a
  stock bolt's ``emit`` (``bolt_emit_for``);
* ``CollectorCore.run_tuples``: a batch's ``Tuple`` objects through a stock bolt's
  ``process`` and auto-``ack``, as ``Bolt._process_tuple`` and ``Bolt.ack`` do them;
  ``run_blobs`` the same straight from the batch's msgpack rows, each decoded, built and
  run before the next (compiled, the common rows are decoded into the values namedtuple
  with no list between);
* ``CollectorCore.burst``: a spout's ``next_tuple`` called while it emits.

A component whose class overrides any of these methods gets the Storm API's own methods
(``compat.storm_api``): the components decide (``Spout._bind``, ``Bolt._bind``,
``HostedBolt.batch_runner``), so what a subclass overrides always runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import msgpack

from compat.storm_api.component import not_a_tuple
from compat.storm_api.exceptions import StormWentAwayError
from compat.storm_api.hosting import handle_component_exception
from compat.storm_api.tuple import Tuple
from engine.common.codec.codec import values_of
from engine.common.codec.markers import RowNotPacked

#: False here, True in the compiled twin: which one a caller holds.
COMPILED = False

#: ControlBatch's ACK kind (tuple.proto), as the collector sends it
ACK = 1
_perf_counter = time.perf_counter
_new = tuple.__new__


def _loads(blob: bytes) -> Any:
    """One row as ``engine.common.serialization.MsgpackSerializer.loads`` decodes it, with the
    same settings (``run_blobs`` is for msgpack rows; that module imports this package,
    so its function cannot be imported here)."""
    return msgpack.unpackb(blob, raw=False, strict_map_key=False, use_list=True)
_monotonic = time.monotonic


class CollectorHooks(Protocol):
    """What ``CollectorCore`` calls on its subclass (``engine.instance.collector``'s
    ``InstanceCollector``), for the type checker: the core never runs alone."""

    def _emit_checked(self, out: Any, values: list[Any] | tuple[Any, ...], stream: str | None,
                      direct_task: int | None, need_task_ids: bool, tup_id: Any | None,
                      anchors: list[Any] | None = None) -> list[int] | None: ...

    def _switch_to(self, out: Any) -> None: ...

    def flush_stream(self, out: Any) -> None: ...

    def flush(self) -> None: ...

    def _anchor_roots(self, anchors: list[Any], stream: str) -> tuple[tuple[int, int], ...]: ...

    def _serialization_error(self, exc: Exception, out: Any,
                             values: Any) -> Exception: ...

    def _unknown_input(self, tup_id: Any, verb: str) -> Exception: ...


if TYPE_CHECKING:
    # the checker sees the hooks on the core; at run time its base stays object (the
    # compiled twin's is too)
    _CoreBase = CollectorHooks
else:
    _CoreBase = object


class CollectorCore(_CoreBase):
    """What an instance collector does once per tuple (its subclass does the rest).

    The subclass provides ``_emit_checked``, ``_switch_to``, ``flush_stream``, ``flush``,
    ``_anchor_roots``, ``_serialization_error`` and ``_unknown_input``; the attributes
    below are set by its constructor.
    """

    def __init__(self) -> None:
        self.streams: dict[str, Any] = {}
        self._default: Any = None
        self._open: Any = None
        #: the serializer's ``dumps``: None until the subclass's constructor sets it, which
        #: is before any emit
        self._dumps: Callable[[Any], bytes] = None  # type: ignore[assignment]  # see above
        self.capture: Any = None
        self.stats: Any = None
        self.acking = False
        self.emitted = 0
        self.emitted_ids: list[Any] = []
        self.inflight: dict[str, Any] = {}
        self.received: dict[str, float] = {}
        self._settled: list[tuple[int, Any]] = []
        self.batch_size = 1
        self.process_secs = 0.0
        self.processed = 0
        #: the subclass keeps this class's ``ack`` (``run_tuples`` may skip its frame)
        self._plain_ack = type(self).ack is CollectorCore.ack
        #: tuples ``run_tuples`` finished (executed, or failed by raising) in its last call
        self.ran = 0
        #: whether a finished call of the last ``burst`` emitted, and ``emitted`` before
        #: its last call
        self.burst_emitted = False
        self.burst_before = 0

    # -- emits ---------------------------------------------------------------------------
    def emit(self, values: list | tuple, stream: str | None, anchors: list | None,
             direct_task: int | None, need_task_ids: bool, tup_id: Any | None) -> list[int] | None:
        out = self._default if (stream is None or stream == "default") else self.streams.get(stream)
        # The hot paths: emits that return nothing, on a leaf stream (recorded by the
        # capture, sent nowhere) or on a routed stream whose batch names no explicit
        # destinations, tracked (a spout's message id, a bolt's anchors under acking) or
        # not. Everything else is _emit_checked's.
        if (out is None or direct_task is not None or need_task_ids or out.direct
                or len(values) != out.nfields):
            return self._emit_checked(out, values, stream, direct_task, need_task_ids, tup_id,
                                      anchors)
        acking = self.acking
        if out.leaf:
            if tup_id is not None:
                return self._emit_checked(out, values, stream, direct_task, need_task_ids,
                                          tup_id, anchors)
            if anchors and acking:  # the same errors as a routed emit; no copy to track
                if len(anchors) != 1 or anchors[0] not in self.inflight:
                    self._anchor_roots(anchors, out.name)
            try:
                payload = self._dumps(values)  # as the storm engine does: same errors
            except Exception as exc:
                raise self._serialization_error(exc, out, values) from None
            self.emitted += 1
            if self.capture is not None:
                self.capture.record(out.name, values, payload)
            return None
        if out.slow or (tup_id is not None and not acking):
            return self._emit_checked(out, values, stream, direct_task, need_task_ids, tup_id,
                                      anchors)
        if out is not self._open:
            self._switch_to(out)
        try:
            # the row packed, its tree (a spout's new root in pending_roots, or the
            # anchors' roots) and its key hashes, by the tuple path; True when full
            full = out.add_row(values, tup_id, anchors if acking else None)
        except RowNotPacked as exc:
            raise self._serialization_error(exc.error, out, values) from None
        self.emitted += 1
        if full:
            self.flush_stream(out)
        return None

    def spout_emit(self, tup: list | tuple, tup_id: Any = None, stream: str | None = None,
                   direct_task: int | None = None,
                   need_task_ids: bool = False) -> list[int] | None:
        """``Spout.emit`` (its signature, checks and result) and then ``emit``."""
        if not isinstance(tup, (list, tuple)):
            raise not_a_tuple(tup)
        task_ids = self.emit(tup, stream, None, direct_task, need_task_ids, tup_id)
        if not need_task_ids:
            return None
        return [direct_task] if direct_task is not None else task_ids

    def bolt_emit_for(self, component: Any) -> Callable[..., list[int] | None]:
        """``component.emit`` for a bolt whose class keeps ``Bolt.emit``."""
        return BoltEmit(self, component).emit

    # -- acks ----------------------------------------------------------------------------
    def ack(self, tup_id: Any) -> None:
        self._ack(tup_id, True)

    def _ack(self, tup_id: Any, count: bool) -> None:
        """``ack``; ``count``: add it to ``stats.acked`` here (else the caller does)."""
        if self.acking:
            entry = self.inflight.pop(tup_id, self)
            if entry is self:
                raise self._unknown_input(tup_id, "acked")
            if entry is not None:  # collector.UNTRACKED
                settled = self._settled
                settled.append((ACK, entry))
                if len(settled) >= self.batch_size:
                    self.flush()
        if count:
            self.stats.acked += 1
        if self.received:
            received = self.received.pop(tup_id, None)
            if received is not None:
                self.process_secs += _perf_counter() - received
                self.processed += 1

    # -- a bolt's batch ------------------------------------------------------------------
    def run_tuples(self, component: Any, tuples: list, start: int) -> None:
        """``tuples[start:]`` through a stock bolt: per tuple what ``Bolt._process_tuple``
        does with a data tuple (``process``, then the auto-``ack`` through ``Bolt.ack``)
        and what hosting does with an exception (``ComponentFailure``, or nothing for a
        bolt that keeps running). ``ran`` says how many tuples were done with, the one that
        raised included, when ``ComponentFailure`` propagates.

        ``_current_tups`` (pystorm's record of the tuple being processed) is kept as
        ``_process_tuple`` keeps it when trees are tracked, where ``Bolt.emit`` anchors to
        it. Untracked, only the handling of an exception reads it (``Bolt.emit`` ignores
        anchors then), so it is set for that alone. The ``process`` method is looked up
        once per batch, ``auto_ack`` before every ack, as ``_process_tuple`` reads it."""
        n = len(tuples)
        i = start
        acked = 0
        track = self.acking
        plain_ack = self._plain_ack
        process = component.process
        self.ran = 0
        try:
            while i < n:
                tup = tuples[i]
                i += 1
                acked += self._run_one(component, process, tup, tup[0], track, plain_ack)
        finally:
            self.ran = i - start
            if acked:
                self.stats.acked += acked

    def _run_one(self, component: Any, process: Callable[[Any], None], tup: Any, tup_id: Any,
                 track: bool, plain_ack: bool) -> int:
        """One data tuple through a stock bolt, as ``Bolt._process_tuple`` and hosting do
        it; 1 when this class's ``ack`` acked it (the caller adds those to
        ``stats.acked`` once), else 0."""
        acked = 0
        try:
            if track:
                component._current_tups = [tup]
            process(tup)
            if component.auto_ack:
                if plain_ack:
                    self._ack(tup_id, False)  # Bolt.ack(tup)
                    acked = 1
                else:
                    self.ack(tup_id)
            if track:
                component._current_tups = []
        except StormWentAwayError:
            raise
        except Exception as exc:
            if not track:
                component._current_tups = [tup]
            handle_component_exception(component, exc)
        return acked

    def run_blobs(self, component: Any, blobs: Any, first_id: int, source: str, stream: str,
                  task: int, values_type: type | None, start: int,
                  ids: list[str] | None = None, payload: bytes | None = None
                  ) -> Exception | None:
        """``blobs[start:]``, a batch's msgpack rows, each decoded as the bolt's serializer
        decodes one (``MsgpackSerializer.loads``), built into the ``Tuple`` that
        ``make_tuples`` builds (id ``str(first_id + i)``) and run through a stock bolt as
        ``run_tuples`` runs it, one row after another: no list of the batch's values or
        tuples is built. Stops at a row that does not decode or does not fit the stream
        and returns its error (``ran`` counts that row: the caller drops it alone and goes
        on after it); None when every row ran. ``ComponentFailure`` propagates with
        ``ran`` set as ``run_tuples`` sets it. ``ids``, when given, holds those ids already
        made (``ids[i] == str(first_id + i)``: the ones the in-flight table was keyed by
        at-least-once), so each tuple's id is that same string, made and hashed once.
        ``payload``, the serialized batch the rows came from, is for the compiled twin
        (which reads the rows where they lie in it); here the rows are ``blobs``."""
        n = len(blobs)
        i = start
        acked = 0
        track = self.acking
        plain_ack = self._plain_ack
        process = component.process
        # values_type is the stream's values namedtuple class (typed ``type``, as given)
        width = (len(values_type._fields)  # type: ignore[attr-defined]  # see above
                 if values_type is not None else -1)
        self.ran = 0
        try:
            while i < n:
                blob = blobs[i]
                i += 1
                try:
                    values = values_of(_loads(blob), values_type, width, source, stream)
                except Exception as exc:
                    return exc
                tup_id = ids[i - 1] if ids is not None else str(first_id + i - 1)
                tup = _new(Tuple, (tup_id, source, stream, task, values))
                acked += self._run_one(component, process, tup, tup_id, track, plain_ack)
            return None
        finally:
            self.ran = i - start
            if acked:
                self.stats.acked += acked

    # -- a spout's burst -----------------------------------------------------------------
    def burst(self, next_tuple: Callable[[], None], burst_end: float, pending: Any,
              max_pending: int) -> int:
        """Call ``next_tuple`` while it emits, until ``burst_end`` (``time.monotonic``) or
        until ``pending`` holds ``max_pending`` trees (-1: no bound). Returns 0 when the
        burst is over (a call emitted nothing, or time or pending says stop), 1 when a call
        left at-most-once message ids to ack (``emitted_ids``): the caller acks them and
        goes on as after any call. ``burst_emitted`` says whether a finished call emitted,
        ``burst_before`` what ``emitted`` was before the last call (for the caller's checks
        after a call that raised); exceptions propagate."""
        self.burst_emitted = False
        while True:
            self.burst_before = before = self.emitted
            next_tuple()
            if self.emitted_ids:
                return 1
            if self.emitted == before:
                return 0
            self.burst_emitted = True
            if _monotonic() >= burst_end or (max_pending >= 0 and len(pending) >= max_pending):
                return 0


class BoltEmit:
    """``Bolt.emit`` for one bolt, then its collector's ``emit``, in one call."""

    __slots__ = ("core", "component", "anchor_ids")

    def __init__(self, core: CollectorCore, component: Any) -> None:
        self.core = core
        self.component = component
        #: Bolt._bind's choice: the collector tracks tuple trees
        self.anchor_ids = component._anchor_ids

    def emit(self, tup: list | tuple, stream: str | None = None, anchors: list | None = None,
             direct_task: int | None = None, need_task_ids: bool = False) -> list[int] | None:
        if not isinstance(tup, (list, tuple)):
            raise not_a_tuple(tup)
        if self.anchor_ids:
            component = self.component
            if anchors is None:
                anchors = component._current_tups if component.auto_anchor else []
            if len(anchors) == 1:
                anchor = anchors[0]
                anchors = [anchor.id if isinstance(anchor, Tuple) else anchor]
            else:
                anchors = [a.id if isinstance(a, Tuple) else a for a in anchors]
        else:
            anchors = None
        task_ids = self.core.emit(tup, stream, anchors, direct_task, need_task_ids, None)
        if not need_task_ids:
            return None
        return [direct_task] if direct_task is not None else task_ids
