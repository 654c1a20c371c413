"""Bolts: ``Bolt``, ``BatchingBolt`` and ``TicklessBatchingBolt``.

Behaviour follows pystorm 3.1.4: auto-anchor to the current input(s),
auto-ack after ``process``/``process_tick``, auto-fail when user code raises,
BatchingBolt's tick counting and TicklessBatchingBolt's batcher thread.

In-process engines call :meth:`Bolt._process_tuple` with tuples built by
:meth:`Bolt._make_tuple`; multi-lang ``run()`` reads them off the wire and
goes through the same two methods.
"""
from __future__ import annotations

import sys
import threading
from collections import defaultdict
from collections.abc import Hashable
from types import TracebackType
from typing import Any, NamedTuple

from .component import Component, not_a_tuple
from .dsl import spec_for_bolt
from .dsl.component import PythonBoltSpec
from .tuple import Tuple, source_tuple_types

__all__ = ["Bolt", "BatchingBolt", "TicklessBatchingBolt"]

# what sys.exc_info() returns
_OptExcInfo = (tuple[type[BaseException], BaseException, TracebackType]
              | tuple[None, None, None])


class Bolt(Component):
    """Base class for bolts: implement ``process(tup)``.

    ``auto_anchor``, ``auto_ack`` and ``auto_fail`` default to True.  Acking
    or failing by hand while ``auto_ack`` is on acks twice, which Storm
    treats as fatal: set ``auto_ack = False`` / ``auto_fail = False`` then.
    """

    auto_anchor = True
    auto_ack = True
    auto_fail = True

    # A class-level list, as in pystorm: instances replace it per tuple.
    _current_tups: list[Any] = []
    #: emits pass anchor ids to the collector (False: it tracks no tuple trees)
    _anchor_ids = True
    #: is_tick and is_heartbeat are the stock ones (see _process_tuple)
    _plain_system_checks = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._plain_system_checks = (cls.is_tick is Bolt.is_tick
                                    and cls.is_heartbeat is Component.is_heartbeat)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._source_tuple_types: defaultdict[Any, dict[str, type[NamedTuple]]] = defaultdict(
            dict)

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        inputs: Any = None,
        par: int | dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> PythonBoltSpec:
        """Declare this bolt in a ``Topology`` (outputs come from ``cls.outputs``)."""
        return spec_for_bolt(cls, name=name, inputs=inputs, par=par, config=config)

    def _bind(
        self, storm_conf: dict[str, Any], context: dict[str, Any], collector: Any, logger: Any
    ) -> None:
        super()._bind(storm_conf, context, collector, logger)
        # A collector that says it tracks no tuple trees (an at-most-once engine) is
        # spared turning anchors into ids on every emit.
        self._anchor_ids = getattr(collector, "tracks_anchors", True)
        # An engine's collector may offer this class's ``emit`` and its own in one call
        # (``bolt_emit_for``, see OutputCollector): only a class that keeps ``Bolt.emit``
        # gets it, so a subclass's own ``emit`` always runs.
        if type(self).emit is Bolt.emit:
            bolt_emit_for = getattr(collector, "bolt_emit_for", None)
            if bolt_emit_for is not None:
                # per instance, on purpose: the fused call stands in for this method
                self.emit = bolt_emit_for(self)  # type: ignore[method-assign]

    def _setup_from_context(self, context: dict[str, Any]) -> None:
        for source, types in source_tuple_types(context).items():
            self._source_tuple_types[source].update(types)

    @staticmethod
    def is_tick(tup: Tuple) -> bool:
        """:returns: Whether or not the given Tuple is a tick Tuple."""
        return tup.component == "__system" and tup.stream == "__tick"

    def _make_tuple(self, id: Any, component: Any, stream: str, task: int, values: Any) -> Tuple:
        """Build the ``Tuple`` user code sees, with namedtuple values.

        In-process engines call this instead of ``read_tuple``; the values
        types are built once per source stream from the context.
        """
        val_type = self._source_tuple_types[component].get(stream)
        return Tuple(
            id, component, stream, task, tuple(values) if val_type is None else val_type(*values)
        )

    def read_tuple(self) -> Tuple:
        """Read a tuple from the pipe to Storm."""
        cmd = self.read_command()
        return self._make_tuple(cmd["id"], cmd["comp"], cmd["stream"], cmd["task"], cmd["tuple"])

    def process(self, tup: Tuple) -> None:
        """Process one input tuple; must be overridden."""
        raise NotImplementedError()

    def process_tick(self, tup: Tuple) -> None:
        """Handle a tick tuple (``topology.tick.tuple.freq.secs``); default ignores it."""

    # pystorm's signature: a bolt's emit takes no tup_id (Component.emit does)
    def emit(  # type: ignore[override]
        self,
        tup: list[Any] | tuple[Any, ...],
        stream: str | None = None,
        anchors: list[Any] | None = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit a tuple anchored to ``anchors`` (Tuples or ids).

        Without ``anchors`` the emit is anchored to the current input(s) when
        ``auto_anchor`` is on, and unanchored otherwise.
        """
        # Component.emit's work, inlined: this runs once per output tuple.
        if not isinstance(tup, (list, tuple)):
            raise not_a_tuple(tup)
        if self._anchor_ids:
            if anchors is None:
                anchors = self._current_tups if self.auto_anchor else []
            if len(anchors) == 1:  # the common case, without a comprehension's frame
                anchor = anchors[0]
                anchors = [anchor.id if isinstance(anchor, Tuple) else anchor]
            else:
                anchors = [a.id if isinstance(a, Tuple) else a for a in anchors]
        else:
            anchors = None  # the collector tracks no trees: anchors would be ignored
        task_ids = self._collector.emit(tup, stream, anchors, direct_task, need_task_ids, None)
        if not need_task_ids:
            return None
        return [direct_task] if direct_task is not None else task_ids

    def ack(self, tup: Tuple | Any) -> None:
        """Mark a Tuple (or raw id) as processed."""
        self._collector.ack(tup.id if isinstance(tup, Tuple) else tup)

    def fail(self, tup: Tuple | Any) -> None:
        """Mark a Tuple (or raw id) as failed; its spout tuple fails at once."""
        self._collector.fail(tup.id if isinstance(tup, Tuple) else tup)

    def _run(self) -> None:
        self._process_tuple(self.read_tuple())

    def _process_tuple(self, tup: Tuple) -> None:
        """Everything ``run()`` does with one tuple once it has been read.

        Exceptions propagate; ``_current_tups`` is left set when they do so
        that ``_handle_run_exception`` fails the right tuple.
        """
        self._current_tups = [tup]
        # Ticks and heartbeats come from the system task (-1): other tuples skip both
        # checks unless a subclass redefines what a tick or heartbeat is.
        if tup.task != -1 and self._plain_system_checks:
            self.process(tup)
            if self.auto_ack:
                self.ack(tup)
        elif self.is_heartbeat(tup):
            self._collector.sync()
        elif self.is_tick(tup):
            self.process_tick(tup)
            if self.auto_ack:
                self.ack(tup)
        else:
            self.process(tup)
            if self.auto_ack:
                self.ack(tup)
        self._current_tups = []

    def _handle_run_exception(self, exc: BaseException) -> None:
        """Report the error against the current tuple and auto-fail it."""
        if len(self._current_tups) == 1:
            tup = self._current_tups[0]
            self.raise_exception(exc, tup)
            if self.auto_fail:
                self.fail(tup)


class BatchingBolt(Bolt):
    """Bolt that collects tuples and processes them in batches on ticks.

    Implement ``process_batch(key, tups)``; override ``group_key(tup)`` to
    split batches.  A batch is processed when the tick counter exceeds
    ``ticks_between_batches`` and some batch is non-empty, so with the
    default of 1 data is flushed on the second tick after it arrived.  Needs
    ``topology.tick.tuple.freq.secs``; emits in ``process_batch`` are
    anchored to every tuple of the batch.
    """

    auto_anchor = True
    auto_ack = True
    auto_fail = True
    ticks_between_batches = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._batches: defaultdict[Hashable, list[Any]] = defaultdict(list)
        self._tick_counter = 0
        self._current_key: Hashable = None

    def group_key(self, tup: Tuple) -> Hashable:
        """Key of the batch ``tup`` belongs to; None puts everything in one batch."""
        return None

    def process_batch(self, key: Hashable, tups: list[Any]) -> None:
        """Process one batch; must be overridden."""
        raise NotImplementedError()

    # pystorm's signature: keywords only, and no task ids to return
    def emit(  # type: ignore[override]
        self, tup: list[Any] | tuple[Any, ...], **kwargs: Any
    ) -> None:
        """Emit as ``Bolt.emit`` does, but never ask for task ids."""
        kwargs["need_task_ids"] = False
        super().emit(tup, **kwargs)  # None: need_task_ids is False

    def process_tick(self, tick_tup: Tuple) -> None:
        """Count the tick, ack it, and flush batches when it is time.  Do not override."""
        self._tick_counter += 1
        self.ack(tick_tup)
        if self._tick_counter > self.ticks_between_batches and self._batches:
            self.process_batches()
            self._tick_counter = 0

    def process_batches(self) -> None:
        """Process every batch, auto-acking its tuples, then clear them."""
        for key, batch in self._batches.items():
            self._current_tups = batch
            self._current_key = key
            self.process_batch(key, batch)
            if self.auto_ack:
                for tup in batch:
                    self.ack(tup)
            # An emptied batch tells the failure handler it was acked.
            self._current_key = None
            self._batches[key] = []
        self._batches = defaultdict(list)

    def process(self, tup: Tuple) -> None:
        """Add ``tup`` to its batch.  Do not override."""
        self._batches[self.group_key(tup)].append(tup)

    def _process_tuple(self, tup: Tuple) -> None:
        self._current_tups = [tup]
        if self.is_heartbeat(tup):
            self._collector.sync()
        elif self.is_tick(tup):
            self.process_tick(tup)
        else:
            self.process(tup)
        self._current_tups = []

    def _handle_run_exception(self, exc: BaseException) -> None:
        """Report the error, then fail pending batches and current tuples.

        With ``exit_on_exception`` every pending batch is failed (the process
        is about to die); otherwise only the batch being processed.
        """
        self.raise_exception(exc, self._current_tups)
        if self.auto_fail:
            failed = set()
            for key, batch in self._batches.items():
                if self.exit_on_exception or key == self._current_key:
                    for tup in batch:
                        self.fail(tup)
                        failed.add(tup.id)
            for tup in self._current_tups:
                if tup.id not in failed:
                    self.fail(tup)
            self._batches[self._current_key] = []
            self._current_key = None


class TicklessBatchingBolt(BatchingBolt):
    """BatchingBolt flushed by a timer thread every ``secs_between_batches``.

    Ticks are only acked.  The batcher thread starts at construction, as in
    pystorm.  When ``process_batch`` raises in the batcher thread:

    * multi-lang: the batcher waits for the main thread to finish its
      current tuple, then does what ``run()`` does with an exception (log,
      error, fail, exit 1).  pystorm gets there by sending itself SIGUSR1 to
      interrupt the main thread's read; doing it from the batcher gives the
      same messages and exit status without taking over a signal or raising
      inside whatever the main thread was doing.
    * in-process: the exception is stored and raised by the next
      ``_process_tuple`` call, so the engine handles it like any other.
    """

    auto_anchor = True
    auto_ack = True
    auto_fail = True
    secs_between_batches = 2

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exc_info: _OptExcInfo | None = None
        self._batcher_failure: BaseException | None = None
        self._batch_lock = threading.RLock()
        self._batcher_stop = threading.Event()
        self._batcher = threading.Thread(target=self._batch_entry, daemon=True,
                                         name=f"{self.__class__.__name__}:_batcher-thread")
        self._batcher.start()

    def _setup_component(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        super()._setup_component(storm_conf, context)
        # Multi-lang only: the process is ours, so name its main thread as pystorm does.
        threading.current_thread().name = f"{self.__class__.__name__}:main-thread"

    def process_tick(self, tick_tup: Tuple) -> None:
        """Just ack tick tuples and ignore them."""
        self.ack(tick_tup)

    def _batch_entry_run(self) -> None:
        """Sleep, then process the batches under the batch lock."""
        if self._batcher_stop.wait(self.secs_between_batches):
            return
        with self._batch_lock:
            self.process_batches()

    def _batch_entry(self) -> None:
        try:
            while not self._batcher_stop.is_set():
                self._batch_entry_run()
        except BaseException as exc:
            self.exc_info = sys.exc_info()
            if self._bound:
                self._batcher_failure = exc
            elif isinstance(exc, Exception):
                with self._batch_lock:
                    self._report_run_exception(exc)
            else:
                self._exit(1)

    def _process_tuple(self, tup: Tuple) -> None:
        failure = self._batcher_failure
        if failure is not None:
            self._batcher_failure = None
            raise failure
        with self._batch_lock:
            super()._process_tuple(tup)

    def _run(self) -> None:
        # Read before taking the lock: a read blocked at shutdown must not
        # keep the batcher from flushing.
        tup = self.read_tuple()
        self._process_tuple(tup)

    def _close(self, timeout: float = 5.0) -> None:
        """Stop the batcher thread (in-process restarts would leak it)."""
        self._batcher_stop.set()
        if self._batcher is not threading.current_thread():
            self._batcher.join(timeout)
