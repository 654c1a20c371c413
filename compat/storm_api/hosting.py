"""Run any spout or bolt in-process behind one interface.

Engines and the test harness call :func:`host_component` with a component
class and get a :class:`HostedSpout` or :class:`HostedBolt`.  The class may
be ours (``compat.storm_api``) or a real pystorm/streamparse class loaded
unchanged; either way the component sees the conf and context dicts it
would get from Storm's handshake, and its outputs arrive as calls on the
given :class:`~.collector.OutputCollector`.

Nothing process-wide is touched: no handlers on the root logger, no
``sys.stdout`` swap, no signal handlers, and components can be built and
run on any thread.  For pystorm classes that takes some care:

* they are built on in-memory streams with ``rdb_signal=None`` and never go
  through pystorm's ``_setup_component`` (which configures root logging);
  the attributes it would set are set here instead;
* ``send_message`` is replaced on the instance, so each protocol dict
  becomes the matching collector call, and task ids the collector returns
  are queued where pystorm's ``read_task_ids`` looks;
* a tuple is executed by queueing its protocol dict and calling pystorm's
  own ``_run()``, so pystorm's logic (batching included) runs unchanged;
* pystorm's ``TicklessBatchingBolt.__init__`` installs a SIGUSR1 handler
  (illegal off the main thread) and its batcher kills its own process on
  error.  While hosting constructs one, its ``__init__`` is diverted to a
  safe variant (a thread-local switch, so other constructions are
  unaffected): no handler, and a batcher that stores its exception so the
  next ``execute`` raises it.

When user code raises, the component's own exception handling runs first
(error message, auto-fail: what the wire would show) and then
:class:`~.exceptions.ComponentFailure` is raised so the engine can log one
line and restart the task with a fresh instance.  A component with
``exit_on_exception = False`` keeps running instead, as under pystorm.
"""
from __future__ import annotations

import functools
import io
import logging
import os
import sys
import threading
from collections.abc import Callable
from traceback import format_exc
from typing import Any, NamedTuple, cast

from .bolt import Bolt
from .collector import OutputCollector, dispatch_message
from .component import Component, component_identity
from .exceptions import ComponentFailure, StormWentAwayError
from .spout import Spout
from .state import HashMapState, StatefulComponent
from .tuple import Tuple, source_tuple_types

__all__ = ["host_component", "HostedBolt", "HostedSpout", "handle_component_exception"]


def handle_component_exception(component: Any, exc: BaseException) -> None:
    """Do what a component's run loop does with ``exc``, then raise.

    Runs the component's ``_handle_run_exception`` (error + sync, auto-fail)
    and raises ``ComponentFailure``, which carries the traceback for the
    engine to log.  A component with ``exit_on_exception`` false keeps
    running, so its traceback is logged here instead, on its own logger.
    Call it from the ``except`` block handling ``exc``.
    """
    traceback_text = format_exc()
    try:
        component._handle_run_exception(exc)
    except StormWentAwayError:
        raise
    except Exception:
        component.logger.error("While trying to handle an exception from %s: %s",
                               component.__class__.__name__, traceback_text.rstrip(),
                               exc_info=True)
    if component.exit_on_exception:
        raise ComponentFailure(component.component_name, component.task_id, exc,
                               traceback_text) from exc
    component.logger.error("Exception in %s.run()\n%s", component.__class__.__name__,
                           traceback_text.rstrip())


class HostedBolt:
    """A bolt instance driven in-process by an engine."""

    def __init__(self, component: Bolt) -> None:
        self.component = component
        self._process_tuple = component._process_tuple

    def make_tuple(self, id: Any, component: Any, stream: str, task: int, values: Any) -> Tuple:
        """The ``Tuple`` this bolt would read off the wire for these fields."""
        return self.component._make_tuple(id, component, stream, task, values)

    def tuple_factory(self, component: Any, stream: str, task: int) -> Callable[[Any, Any], Tuple]:
        """``make(id, values)`` for many tuples of one source stream: what ``make_tuple``
        builds, with the per-stream lookups done once. ``values`` must be a list or tuple;
        a wrong number of values raises ``ValueError`` (a namedtuple would raise
        ``TypeError``)."""
        if type(self.component)._make_tuple is not Bolt._make_tuple:  # the user's own
            make_tuple = self.make_tuple
            return lambda id, values: make_tuple(id, component, stream, task, values)
        val_type = self.component._source_tuple_types[component].get(stream)
        new = tuple.__new__
        if val_type is None:
            def make_plain(id: Any, values: Any) -> Tuple:
                return new(Tuple, (id, component, stream, task, tuple(values)))
            return make_plain
        width = len(val_type._fields)

        def make(id: Any, values: Any) -> Tuple:
            if len(values) != width:
                raise ValueError(f"{len(values)} value(s) for the {width} field(s) "
                                 f"{list(val_type._fields)} of {component}/{stream}")
            return new(Tuple, (id, component, stream, task, new(val_type, values)))
        return make

    def tuple_runner(self, component: Any, stream: str, task: int) -> Callable[[Any, Any], None]:
        """``run(id, values)``: ``execute(make(id, values))`` for many tuples of one source
        stream, in one call per tuple where that is exact.

        Engines call this once per batch and ``run`` once per tuple, so for a bolt whose
        class keeps the stock ``_process_tuple`` and ``ack`` (every streamparse word count,
        and most bolts) the work of ``make``, ``execute``, ``_process_tuple`` and ``ack``
        is done here in one frame: the same steps, in the same order, with the same
        errors. Any other bolt gets the two calls."""
        make = self.tuple_factory(component, stream, task)
        comp = self.component
        cls = type(comp)
        if (type(self) is not HostedBolt or task == -1 or not cls._plain_system_checks
                or cls._process_tuple is not Bolt._process_tuple or cls.ack is not Bolt.ack
                or cls._make_tuple is not Bolt._make_tuple):
            execute = self.execute

            def run_generic(id: Any, values: Any) -> None:
                execute(make(id, values))
            return run_generic
        collector_ack = comp._collector.ack
        val_type = comp._source_tuple_types[component].get(stream)
        new = tuple.__new__
        width = len(val_type._fields) if val_type is not None else -1

        def run(id: Any, values: Any) -> None:
            # make(id, values), as tuple_factory builds it
            if val_type is None:
                tup = new(Tuple, (id, component, stream, task, tuple(values)))
            elif len(values) != width:
                raise ValueError(f"{len(values)} value(s) for the {width} field(s) "
                                 f"{list(val_type._fields)} of {component}/{stream}")
            else:
                tup = new(Tuple, (id, component, stream, task, new(val_type, values)))
            # execute(tup) -> Bolt._process_tuple(tup) for a tuple not from the system task
            try:
                comp._current_tups = [tup]
                comp.process(tup)
                if comp.auto_ack:
                    collector_ack(id)  # Bolt.ack(tup)
                comp._current_tups = []
            except StormWentAwayError:
                raise
            except Exception as exc:
                handle_component_exception(comp, exc)
        return run

    def tuple_executor(self, component: Any, stream: str,
                       task: int) -> tuple[type | None, Callable[[Tuple], None]] | None:
        """For an engine that builds a batch's ``Tuple`` objects itself, many at a time
        (the compiled tuple path, ``engine.common.codec``): ``(values_type, run)``. The
        tuples must be what ``tuple_factory`` builds, ``Tuple(id, component, stream,
        task, values)`` with ``values_type`` values (a plain tuple when it is None), and
        ``run(tup)`` executes one exactly as ``tuple_runner``'s ``run`` does. None when
        this bolt builds its tuples its own way (its own ``_make_tuple``, a subclass of
        this host): use ``tuple_runner``."""
        comp = self.component
        cls = type(comp)
        if type(self) is not HostedBolt or cls._make_tuple is not Bolt._make_tuple:
            return None
        val_type = comp._source_tuple_types[component].get(stream)
        if (task == -1 or not cls._plain_system_checks
                or cls._process_tuple is not Bolt._process_tuple or cls.ack is not Bolt.ack):
            return val_type, self.execute
        collector_ack = comp._collector.ack

        def run(tup: Tuple) -> None:
            # tuple_runner's run, after its make(id, values)
            try:
                comp._current_tups = [tup]
                comp.process(tup)
                if comp.auto_ack:
                    collector_ack(tup[0])  # Bolt.ack(tup)
                comp._current_tups = []
            except StormWentAwayError:
                raise
            except Exception as exc:
                handle_component_exception(comp, exc)
        return val_type, run

    def batch_runner(
        self, component: Any, stream: str, task: int
    ) -> tuple[type | None, Bolt] | None:
        """For an engine that runs a batch's tuples through the bolt itself, in a loop of
        its own (the compiled tuple path's ``run_tuples``): ``(values_type, bolt)`` when
        that is exact, i.e. when for a data tuple of this stream ``execute`` would do no
        more than ``Bolt._process_tuple`` does (set ``_current_tups``, ``process``, the
        auto-``ack`` through ``Bolt.ack`` to the collector) and hosting's handling of what
        it raises. The tuples must be what ``tuple_executor`` says. None when the bolt's
        class changes any of those steps (its own ``_make_tuple``, ``_process_tuple``,
        ``ack``, ``is_tick`` or ``is_heartbeat``), for ticks, and for a subclass of this
        host: use ``tuple_executor`` or ``tuple_runner``."""
        comp = self.component
        cls = type(comp)
        if (type(self) is not HostedBolt or task == -1 or cls._make_tuple is not Bolt._make_tuple
                or not cls._plain_system_checks or cls._process_tuple is not Bolt._process_tuple
                or cls.ack is not Bolt.ack):
            return None
        return comp._source_tuple_types[component].get(stream), comp

    def execute(self, tup: Tuple) -> None:
        """Process one input (tuple, tick or heartbeat) as ``run()`` would."""
        try:
            self._process_tuple(tup)
        except StormWentAwayError:
            raise
        except Exception as exc:
            handle_component_exception(self.component, exc)

    def close(self) -> None:
        """Stop threads the component started; the instance is not reused."""
        self.component._close()


class DirectHooks(NamedTuple):
    """A hosted spout's hooks for an engine's hot loops (``HostedSpout.direct_hooks``)."""

    next_tuple: Callable[[], None]
    ack: Callable[[Any], None]
    fail: Callable[[Any], None]
    on_error: Callable[[Exception], None]


class HostedSpout:
    """A spout instance driven in-process by an engine.

    Like Storm's spout protocol, every command is followed by a ``sync`` on
    the collector (engines may ignore it); calls must not overlap.
    """

    def __init__(self, component: Spout) -> None:
        self.component = component
        self._sync = component._collector.sync
        self._next_tuple = component.next_tuple

    def _call(self, hook: Callable[..., Any], *args: Any) -> None:
        try:
            hook(*args)
        except StormWentAwayError:
            raise
        except Exception as exc:
            handle_component_exception(self.component, exc)
            return  # exit_on_exception is false: the error already synced.
        self._sync()

    def next_tuple(self) -> None:
        # _call's body, inlined: an engine calls this once per emitted tuple.
        try:
            self._next_tuple()
        except StormWentAwayError:
            raise
        except Exception as exc:
            handle_component_exception(self.component, exc)
            return
        self._sync()

    def direct_hooks(self) -> DirectHooks | None:
        """The component's own ``next_tuple``, ``ack`` and ``fail`` for an engine's
        per-tuple loops, called with no wrapper frame, and ``on_error``: what those
        wrappers do with an exception the hook raised (``ComponentFailure``, or nothing
        for a spout that keeps running). Only when the collector's ``sync`` does nothing
        (``syncs_nothing``), so skipping it changes nothing; otherwise None: call
        ``next_tuple()``, ``ack()`` and ``fail()``."""
        comp = self.component
        if type(self) is not HostedSpout or not getattr(comp._collector, "syncs_nothing", False):
            return None

        def on_error(exc: Exception) -> None:
            handle_component_exception(comp, exc)
        return DirectHooks(self._next_tuple, comp.ack, comp.fail, on_error)

    def ack(self, tup_id: Any) -> None:
        self._call(self.component.ack, tup_id)

    def fail(self, tup_id: Any) -> None:
        self._call(self.component.fail, tup_id)

    def activate(self) -> None:
        self._call(self.component.activate)

    def deactivate(self) -> None:
        self._call(self.component.deactivate)

    def is_exhausted(self) -> bool:
        """Our ``Spout.is_exhausted`` extension; spouts without it never are."""
        check = getattr(self.component, "is_exhausted", None)
        if check is None:
            return False
        try:
            return bool(check())
        except StormWentAwayError:
            raise
        except Exception as exc:
            handle_component_exception(self.component, exc)
            return False

    def close(self) -> None:
        close = getattr(self.component, "_close", None)
        if close is not None:
            close()


# -- pystorm classes ---------------------------------------------------------

class _PystormHostedBolt(HostedBolt):
    """Feeds tuples through pystorm's own ``_run()``."""

    def __init__(self, component: Any) -> None:
        self.component = component
        from pystorm.component import Tuple as PystormTuple

        self._tuple_cls = PystormTuple

    def make_tuple(self, id: Any, component: Any, stream: str, task: int, values: Any) -> Tuple:
        val_type = self.component._source_tuple_types[component].get(stream)
        # pystorm's own Tuple (untyped): the same five fields as ours, and what its
        # bolts expect
        return cast(Tuple, self._tuple_cls(
            id, component, stream, task, tuple(values) if val_type is None else val_type(*values)))

    def tuple_factory(self, component: Any, stream: str, task: int) -> Callable[[Any, Any], Tuple]:
        make_tuple = self.make_tuple

        def make(id: Any, values: Any) -> Tuple:
            try:
                return make_tuple(id, component, stream, task, values)
            except TypeError as exc:  # the namedtuple's arity check
                raise ValueError(str(exc)) from None
        return make

    def execute(self, tup: Tuple) -> None:
        comp = self.component
        try:
            _raise_batcher_failure(comp)
            comp._pending_commands.append({"id": tup.id, "comp": tup.component,
                                           "stream": tup.stream, "task": tup.task,
                                           "tuple": tup.values})
            comp._run()
        except StormWentAwayError:
            raise
        except Exception as exc:
            handle_component_exception(comp, exc)

    def close(self) -> None:
        _stop_safe_batcher(self.component)


class _PystormHostedSpout(HostedSpout):
    """Feeds spout commands through pystorm's own ``_run()``."""

    def __init__(self, component: Any) -> None:
        self.component = component

    def _command(self, command: dict[str, Any]) -> None:
        comp = self.component
        try:
            comp._pending_commands.append(command)
            comp._run()  # pystorm sends the sync itself.
        except StormWentAwayError:
            raise
        except Exception as exc:
            handle_component_exception(comp, exc)

    def next_tuple(self) -> None:
        self._command({"command": "next"})

    def ack(self, tup_id: Any) -> None:
        self._command({"command": "ack", "id": tup_id})

    def fail(self, tup_id: Any) -> None:
        self._command({"command": "fail", "id": tup_id})

    def activate(self) -> None:
        self._command({"command": "activate"})

    def deactivate(self) -> None:
        self._command({"command": "deactivate"})

    def close(self) -> None:
        pass


def _pystorm_base(component_cls: type) -> str | None:
    """'bolt', 'spout' or None when the class is not a pystorm component."""
    try:
        import pystorm
    except ImportError:
        return None
    if not issubclass(component_cls, pystorm.component.Component):
        return None
    if issubclass(component_cls, pystorm.bolt.Bolt):
        return "bolt"
    if issubclass(component_cls, pystorm.spout.Spout):
        return "spout"
    return "component"


def _pystorm_sender(component: Any, collector: OutputCollector) -> Callable[[Any], None]:
    pending_task_ids = component._pending_task_ids

    def send_message(message: Any) -> None:
        if not isinstance(message, dict):
            component.logger.error("%s.%d attempted to send a non dict message to Storm: %r",
                                   component.component_name, component.pid, message)
            return
        task_ids = dispatch_message(collector, message)
        if task_ids is not None:
            pending_task_ids.append(task_ids)

    return send_message


def _bind_pystorm(component: Any, storm_conf: dict[str, Any], context: dict[str, Any],
                  collector: OutputCollector, logger: logging.Logger) -> None:
    """Set what pystorm's ``_setup_component`` sets, minus logging setup."""
    for name, value in component_identity(storm_conf, context).items():
        setattr(component, name, value)
    component.pid = os.getpid()
    component.logger = logger
    if hasattr(component, "_source_tuple_types"):
        for source, types in source_tuple_types(context).items():
            component._source_tuple_types[source].update(types)
    component.send_message = _pystorm_sender(component, collector)


_constructing = threading.local()
_guard_lock = threading.Lock()


def _install_tickless_guard() -> None:
    """Divert pystorm's TicklessBatchingBolt.__init__ while hosting builds one."""
    from pystorm.bolt import TicklessBatchingBolt

    with _guard_lock:
        original = TicklessBatchingBolt.__dict__["__init__"]
        if getattr(original, "_compat_hosting_guard", False):
            return

        @functools.wraps(original)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if not getattr(_constructing, "active", False):
                original(self, *args, **kwargs)
                return
            super(TicklessBatchingBolt, self).__init__(*args, **kwargs)
            _start_safe_batcher(self, TicklessBatchingBolt)

        # a marker on the wrapper (functions take attributes; their type does not list it)
        __init__._compat_hosting_guard = True  # type: ignore[attr-defined]
        TicklessBatchingBolt.__init__ = __init__


def _start_safe_batcher(component: Any, tickless_cls: Any) -> None:
    """pystorm's batcher thread without the signal handler or ``os.kill``."""
    component.exc_info = None
    component._compat_batcher_failure = None
    component._batch_lock = threading.RLock()
    stop = threading.Event()
    component._compat_batcher_stop = stop
    custom_run = type(component)._batch_entry_run is not tickless_cls._batch_entry_run
    thread = threading.Thread(target=_safe_batch_loop, args=(component, stop, custom_run),
                              daemon=True, name=f"{component.__class__.__name__}:_batcher-thread")
    component._batcher = thread
    thread.start()


def _safe_batch_loop(component: Any, stop: threading.Event, custom_run: bool) -> None:
    try:
        while not stop.is_set():
            if custom_run:
                component._batch_entry_run()
                continue
            if stop.wait(component.secs_between_batches):
                return
            with component._batch_lock:
                component.process_batches()
    except BaseException as exc:
        component.exc_info = sys.exc_info()
        component._compat_batcher_failure = exc


def _raise_batcher_failure(component: Any) -> None:
    failure = getattr(component, "_compat_batcher_failure", None)
    if failure is not None:
        component._compat_batcher_failure = None
        raise failure


def _stop_safe_batcher(component: Any, timeout: float = 5.0) -> None:
    stop = getattr(component, "_compat_batcher_stop", None)
    if stop is None:
        return
    stop.set()
    if component._batcher is not threading.current_thread():
        component._batcher.join(timeout)


def _construct_pystorm(component_cls: type) -> Any:
    from pystorm.bolt import TicklessBatchingBolt

    if issubclass(component_cls, TicklessBatchingBolt):
        _install_tickless_guard()
    _constructing.active = True
    try:
        return component_cls(input_stream=io.BytesIO(), output_stream=io.BytesIO(), rdb_signal=None)
    finally:
        _constructing.active = False


# -- entry point -------------------------------------------------------------

def host_component(component_cls: type, storm_conf: dict[str, Any], context: dict[str, Any],
                   collector: OutputCollector, logger: logging.Logger,
                   state: Any = None) -> HostedSpout | HostedBolt:
    """Construct, bind and initialize a component for in-process use.

    A ``StatefulComponent`` gets ``init_state(state)`` before ``initialize``, as heronpy
    orders them: ``state`` is the task's restored state, or a fresh empty one when the
    engine gives none (the reliability modes that save nothing).

    Raises ``TypeError`` for a class that is neither a spout nor a bolt, and
    ``ComponentFailure`` when the constructor or ``initialize`` raises (no
    error message is sent then: under Storm the process would just die).
    """
    kind = _pystorm_base(component_cls)
    if kind is None and issubclass(component_cls, Component):
        kind = ("bolt" if issubclass(component_cls, Bolt)
                else "spout" if issubclass(component_cls, Spout) else None)
    if kind not in ("bolt", "spout"):
        raise TypeError(f"{component_cls!r} is neither a spout nor a bolt class")
    is_pystorm = not issubclass(component_cls, Component)
    hosted: HostedSpout | HostedBolt | None = None
    try:
        if is_pystorm:
            component = _construct_pystorm(component_cls)
            _bind_pystorm(component, storm_conf, context, collector, logger)
            hosted = (_PystormHostedBolt(component) if kind == "bolt"
                      else _PystormHostedSpout(component))
        else:
            component = component_cls(input_stream=io.BytesIO(), output_stream=io.BytesIO(),
                                      rdb_signal=None)
            component._bind(storm_conf, context, collector, logger)
            hosted = HostedBolt(component) if kind == "bolt" else HostedSpout(component)
        if isinstance(component, StatefulComponent):
            component.init_state(HashMapState() if state is None else state)
        component.initialize(storm_conf, context)
    except Exception as exc:
        if hosted is not None:
            hosted.close()
        identity = component_identity(storm_conf, context)
        raise ComponentFailure(identity["component_name"], identity["task_id"], exc,
                               format_exc()) from exc
    return hosted
