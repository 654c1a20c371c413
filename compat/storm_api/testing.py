"""Unit-test spouts and bolts without Storm, an engine or any mocking.

:class:`BoltHarness` and :class:`SpoutHarness` host a component in-process
(through :mod:`.hosting`, so real streamparse/pystorm classes work as well
as ours), feed it inputs and record every output::

    >>> from compat.storm_api.bolt import Bolt
    >>> from compat.storm_api.testing import BoltHarness
    >>> class SplitBolt(Bolt):
    ...     outputs = ["word"]
    ...     def process(self, tup):
    ...         for word in tup.values.sentence.split():
    ...             self.emit([word])
    >>> bolt = BoltHarness(SplitBolt, sources={"sentences": ["sentence"]})
    >>> tup = bolt.process(["hello big world"])
    >>> bolt.values()
    [['hello'], ['big'], ['world']]
    >>> bolt.emits[0].anchors == [tup.id] and bolt.acked == [tup.id]
    True

    >>> from compat.storm_api.spout import Spout
    >>> from compat.storm_api.testing import SpoutHarness
    >>> class CountSpout(Spout):
    ...     outputs = ["n"]
    ...     def initialize(self, conf, ctx):
    ...         self.n = 0
    ...     def next_tuple(self):
    ...         self.n += 1
    ...         self.emit([self.n], tup_id=self.n)
    >>> spout = SpoutHarness(CountSpout)
    >>> [e.values for e in spout.next_tuple(n=2)]
    [[1], [2]]

What the harness records:

* ``emits``: :class:`Emit` ``(values, stream, anchors, direct_task,
  tup_id)``; ``values`` as a list (what downstream receives after
  serialization), ``stream`` ``"default"`` when omitted, ``anchors`` the
  input ids (None for spouts);
* ``acked`` / ``failed``: input ids a bolt acked or failed;
* ``logs``: :class:`LogEntry` ``(msg, level)`` from ``self.log`` (Storm
  levels: 0 trace ... 4 error); ``records``: ``logging`` records from
  ``self.logger``;
* ``errors``: messages from ``raise_exception`` (and from auto-fail when
  user code raises); ``metrics``: :class:`Metric` ``(name, value)``.

When user code raises, the component reports and auto-fails as it would
under Storm, then the call raises
:class:`~compat.storm_api.exceptions.ComponentFailure` (the original
exception is its ``__cause__`` and ``.original``).
"""
from __future__ import annotations

import itertools
import logging
import threading
from collections import namedtuple
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from typing import Any

from .hosting import HostedBolt, HostedSpout, handle_component_exception, host_component
from .state import HashMapState
from .tuple import Tuple

__all__ = ["BoltHarness", "SpoutHarness", "RecordingCollector", "Emit", "LogEntry", "Metric"]

Emit = namedtuple("Emit", "values stream anchors direct_task tup_id")
LogEntry = namedtuple("LogEntry", "msg level")
Metric = namedtuple("Metric", "name value")

TaskIds = Callable[[list[Any], str], list[int]] | list[int] | None

_DEFAULT_CONF = {
    "topology.name": "harness",
    "topology.debug": False,
    "topology.message.timeout.secs": 30,
}
_SYSTEM_TASK_ID = -1
_HARNESS_LOGGER = "compat.storm_api.testing"


class RecordingCollector:
    """An OutputCollector that records everything it is given.

    ``task_ids`` answers emits made with ``need_task_ids=True``: a list
    (returned for every emit) or ``callable(values, stream)``; by default
    ``[]``, since a harness has no downstream tasks.
    """

    def __init__(self, task_ids: TaskIds = None) -> None:
        self._task_ids = task_ids
        self._lock = threading.Lock()  # TicklessBatchingBolt emits from its batcher thread.
        self.clear()

    def clear(self) -> None:
        self.emits: list[Emit] = []
        self.acked: list[Any] = []
        self.failed: list[Any] = []
        self.logs: list[LogEntry] = []
        self.errors: list[str] = []
        self.metrics: list[Metric] = []
        self.syncs = 0

    def emit(
        self,
        values: list[Any] | tuple[Any, ...],
        stream: str | None,
        anchors: list[Any] | None,
        direct_task: int | None,
        need_task_ids: bool,
        tup_id: object | None,
    ) -> list[int] | None:
        stream = "default" if stream is None else stream
        with self._lock:
            self.emits.append(
                Emit(
                    list(values),
                    stream,
                    None if anchors is None else list(anchors),
                    direct_task,
                    tup_id,
                )
            )
        if not need_task_ids or direct_task is not None:
            return None
        if callable(self._task_ids):
            return list(self._task_ids(list(values), stream))
        return list(self._task_ids or [])

    def ack(self, tup_id: object) -> None:
        with self._lock:
            self.acked.append(tup_id)

    def fail(self, tup_id: object) -> None:
        with self._lock:
            self.failed.append(tup_id)

    def log(self, msg: str, level: int) -> None:
        with self._lock:
            self.logs.append(LogEntry(msg, level))

    def error(self, msg: str) -> None:
        with self._lock:
            self.errors.append(msg)

    def metric(self, name: str, value: object) -> None:
        with self._lock:
            self.metrics.append(Metric(name, value))

    def sync(self) -> None:
        with self._lock:
            self.syncs += 1


class _RecordList(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _output_fields(outputs: Iterable[Any] | None) -> dict[str, list[str]]:
    """``{stream: fields}`` from a streamparse ``outputs`` attribute."""
    fields: dict[str, list[str]] = {}
    for output in outputs or []:
        if isinstance(output, str):
            fields.setdefault("default", []).append(output)
        else:  # a Stream: .fields and .name
            fields[getattr(output, "name", "default")] = list(output.fields)
    return fields


def _normalize_sources(sources: dict[str, Any] | None) -> dict[str, dict[str, list[str]]]:
    """Accept ``{'spout': ['word']}`` as shorthand for its default stream."""
    normalized = {}
    for source, streams in (sources or {}).items():
        normalized[source] = {"default": list(streams)} if isinstance(streams, (list, tuple)) else {
            stream: list(fields) for stream, fields in streams.items()}
    return normalized


def build_context(component_name: str, task_id: int, outputs: Iterable[Any] | None = None,
                  sources: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Storm-shaped context dict for one task and its input sources.

    Each source gets its own task id after ``task_id``; groupings are
    shuffle since a harness has no topology to take them from.
    """
    stream_fields = _normalize_sources(sources)
    task_to_component = {str(_SYSTEM_TASK_ID): "__system", str(task_id): component_name}
    for offset, source in enumerate(stream_fields, start=1):
        task_to_component[str(task_id + offset)] = source
    output_fields = _output_fields(outputs)
    return {
        "taskid": task_id,
        "componentid": component_name,
        "task->component": task_to_component,
        "streams": list(output_fields),
        "stream->outputfields": output_fields,
        "stream->target->grouping": {},
        "source->stream->grouping": {source: {stream: {"type": "SHUFFLE"} for stream in streams}
                                     for source, streams in stream_fields.items()},
        "source->stream->fields": stream_fields,
    }


class _Harness:
    def __init__(
        self,
        component_cls: type,
        conf: dict[str, Any] | None,
        context: dict[str, Any] | None,
        sources: dict[str, Any] | None,
        component_name: str,
        task_id: int,
        task_ids: TaskIds,
        state: Any = None,
    ) -> None:
        self.storm_conf = {**_DEFAULT_CONF, **(conf or {})}
        self.context = context if context is not None else build_context(
            component_name, task_id, getattr(component_cls, "outputs", None), sources)
        self.collector = RecordingCollector(task_ids)
        self._records = _RecordList()
        # A logger of its own (not in logging's registry, so nothing leaks
        # between harnesses) that still propagates, for pytest's caplog.
        self.logger = logging.Logger(f"{_HARNESS_LOGGER}.{component_name}.{task_id}", logging.DEBUG)
        self.logger.parent = logging.getLogger(_HARNESS_LOGGER)
        self.logger.addHandler(self._records)
        #: what a StatefulComponent was given by ``init_state`` (pass ``state=`` to start
        #: from a restored one, as an engine's rollback does)
        self.state = state if state is not None else HashMapState()
        self._hosted = host_component(component_cls, self.storm_conf, self.context, self.collector,
                                      self.logger, state=self.state)
        self._ids = itertools.count(1)

    @property
    def component(self) -> Any:
        """The component instance under test."""
        return self._hosted.component

    emits = property(lambda self: self.collector.emits)
    acked = property(lambda self: self.collector.acked)
    failed = property(lambda self: self.collector.failed)
    logs = property(lambda self: self.collector.logs)
    errors = property(lambda self: self.collector.errors)
    metrics = property(lambda self: self.collector.metrics)
    records = property(lambda self: self._records.records)

    def values(self, stream: str = "default") -> list[list[Any]]:
        """Values of every emit on ``stream``, in order."""
        return [emit.values for emit in self.collector.emits if emit.stream == stream]

    def clear(self) -> None:
        """Forget everything recorded so far."""
        self.collector.clear()
        self._records.records.clear()

    def close(self) -> None:
        """Stop threads the component started (TicklessBatchingBolt)."""
        self._hosted.close()

    def __enter__(self) -> _Harness:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


class BoltHarness(_Harness):
    """Drive a bolt with tuples, ticks and heartbeats.

    ``sources`` declares the input streams, ``{source: [fields]}`` or
    ``{source: {stream: [fields]}}``, so ``tup.values`` are namedtuples as
    under Storm; ``context`` replaces the generated context dict entirely.
    """

    _hosted: HostedBolt

    def __init__(
        self,
        bolt_cls: type,
        conf: dict[str, Any] | None = None,
        context: dict[str, Any] | None = None,
        sources: dict[str, Any] | None = None,
        component_name: str = "bolt",
        task_id: int = 1,
        task_ids: TaskIds = None,
        state: Any = None,
    ) -> None:
        super().__init__(bolt_cls, conf, context, sources, component_name, task_id, task_ids,
                         state)

    def _default_source(self) -> str:
        sources = list(self.context.get("source->stream->fields", {}))
        if len(sources) > 1:
            raise ValueError(f"several sources are declared ({', '.join(sources)}): pass source=")
        return sources[0] if sources else "spout"

    def _source_task(self, source: str) -> int:
        for task, component in self.context.get("task->component", {}).items():
            if component == source:
                return int(task)
        return 0

    def _next_id(self) -> str:
        return str(next(self._ids))

    def process(
        self,
        values: list[Any] | tuple[Any, ...],
        source: str | None = None,
        stream: str = "default",
        id: Any = None,
        task: int | None = None,
    ) -> Tuple:
        """Deliver one tuple and return it (ids default to "1", "2", ...)."""
        source = self._default_source() if source is None else source
        task = self._source_task(source) if task is None else task
        tup = self._hosted.make_tuple(
            self._next_id() if id is None else id, source, stream, task, values
        )
        self._hosted.execute(tup)
        return tup

    def tick(self, freq_secs: int | None = None) -> Tuple:
        """Deliver a tick tuple, as ``topology.tick.tuple.freq.secs`` would."""
        if freq_secs is None:
            freq_secs = self.storm_conf.get("topology.tick.tuple.freq.secs", 1)
        tup = self._hosted.make_tuple(self._next_id(), "__system", "__tick", -1, [freq_secs])
        self._hosted.execute(tup)
        return tup

    def heartbeat(self) -> Tuple:
        """Deliver a heartbeat; the bolt answers with a sync, nothing else."""
        tup = self._hosted.make_tuple(self._next_id(), None, "__heartbeat", -1, [])
        self._hosted.execute(tup)
        return tup

    def flush(self) -> None:
        """Process pending batches of a batching bolt now.

        What enough ticks (BatchingBolt) or the timer (TicklessBatchingBolt)
        would do, without waiting; failures are handled as in ``process``.
        """
        component = self.component
        try:
            with getattr(component, "_batch_lock", nullcontext()):
                component.process_batches()
        except Exception as exc:
            handle_component_exception(component, exc)


class SpoutHarness(_Harness):
    """Drive a spout with Storm's commands: next, ack, fail, (de)activate."""

    _hosted: HostedSpout

    def __init__(
        self,
        spout_cls: type,
        conf: dict[str, Any] | None = None,
        context: dict[str, Any] | None = None,
        component_name: str = "spout",
        task_id: int = 1,
        task_ids: TaskIds = None,
        state: Any = None,
    ) -> None:
        super().__init__(spout_cls, conf, context, None, component_name, task_id, task_ids, state)

    def next_tuple(self, n: int = 1) -> list[Emit]:
        """Call ``next_tuple`` ``n`` times; return the emits they made."""
        start = len(self.collector.emits)
        for _ in range(n):
            self._hosted.next_tuple()
        return self.collector.emits[start:]

    def drain(self, max_calls: int = 100_000) -> list[Emit]:
        """Call ``next_tuple`` until ``is_exhausted()``; return the emits."""
        start = len(self.collector.emits)
        for _ in range(max_calls):
            if self._hosted.is_exhausted():
                return self.collector.emits[start:]
            self._hosted.next_tuple()
        raise AssertionError(f"spout not exhausted after {max_calls} next_tuple calls")

    def ack(self, tup_id: Any) -> None:
        self._hosted.ack(tup_id)

    def fail(self, tup_id: Any) -> None:
        self._hosted.fail(tup_id)

    def activate(self) -> None:
        self._hosted.activate()

    def deactivate(self) -> None:
        self._hosted.deactivate()

    def is_exhausted(self) -> bool:
        return self._hosted.is_exhausted()
