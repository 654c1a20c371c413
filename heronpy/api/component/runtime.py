"""How a heronpy component runs on our engines: heronpy's instance surface over
``compat.storm_api``'s.

A heronpy ``Spout``/``Bolt`` is a ``compat.storm_api`` Spout/Bolt, so both engines host
it like any Storm-API component. Two things differ, and this module bridges them:

* **The delegate.** heronpy components talk to their Heron instance through
  ``self.delegate`` (``emit`` with heronpy's positional signatures, ``ack``, ``fail``,
  ``log``, ``logger``). :class:`SpoutDelegate` and :class:`BoltDelegate` are that
  instance here: they call ``compat.storm_api``'s own emit/ack/fail, run the task hooks
  and keep the user metrics. A component built with ``cls(delegate=...)`` (as Heron's
  instance and heronpy's unit tests build them) keeps the delegate it was given.
* **The engine's entry points.** The engines call ``initialize(storm_conf, context)``,
  ``next_tuple()``, ``ack(id)``, ``fail(id)`` and ``process_tick(tup)`` on the component,
  and the user's class overrides those names with heronpy's meaning. So when the
  component is bound to an engine, :func:`bind` sets translating versions of them on the
  instance, which call the user's methods: ``initialize`` with heronpy's auto-typed
  config and a ``TopologyContext``; spout ``ack``/``fail`` with the user's ``tup_id``
  (each emit gets its own tracking key, so a tuple tree is acked or failed on its own
  even when a spout reuses one ``tup_id`` for every tuple, as Heron's examples do);
  ``process_tick`` at the frequency the config holds *after* ``initialize`` (the window
  bolts set it there), on top of the engine's tick, which the compiler sets at the
  static frequency or at one second (docs/heronpy.md).

Under ATMOST_ONCE and EFFECTIVELY_ONCE an emit that carries a ``tup_id`` is acked right
after ``next_tuple`` returns, as Heron's instance does.
"""

from __future__ import annotations

import importlib
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any

from compat.storm_api.bolt import Bolt as StormBolt
from compat.storm_api.config import reliability
from compat.storm_api.spout import Spout as StormSpout
from compat.storm_api.tuple import Tuple
from heronpy.api import api_constants, global_metrics
from heronpy.api.component.context import MetricsRegistry, TopologyContextImpl

#: the component config key where the compiler keeps the tick frequency the user set
#: (the engine's own key then holds the tick the adapter runs on)
USER_TICK_KEY = "heronpy.tick.tuple.freq.secs"
#: Heron's metrics export interval key and default (global_metrics' bucket)
EXPORT_INTERVAL_KEY = "heron.metrics.export.interval.sec"
_DEFAULT_EXPORT_SECS = 60.0
_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO,
           "warn": logging.WARNING, "error": logging.ERROR}


def heron_config(storm_conf: dict[str, Any]) -> dict[str, Any]:
    """The config heronpy code sees: the merged config without Storm's unset defaults and
    our bookkeeping keys, with the tick frequency the user set (or none)."""
    config = {key: value for key, value in storm_conf.items()
              if value is not None and not key.startswith("heronpy.tick.")}
    tick = config.pop(api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS, None)
    if USER_TICK_KEY in storm_conf:
        user_tick = storm_conf[USER_TICK_KEY]
        if user_tick is not None:
            config[api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS] = user_tick
    elif tick is not None:
        config[api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS] = tick
    return config


def _load_class(class_path: str) -> type:
    """A class by heronpy's ``module.Class`` path (``topology.auto.task.hooks``)."""
    module_name, _, name = str(class_path).rpartition(".")
    if not module_name:
        raise ValueError(f"{api_constants.TOPOLOGY_AUTO_TASK_HOOKS}: {class_path!r} is not "
                         "a module.Class path")
    hook_class: type = getattr(importlib.import_module(module_name), name)  # the user's
    return hook_class


def log_level(level: str | None) -> int:
    """heronpy's level names (trace, debug, info, warn, error) as logging levels."""
    if level is None:
        return logging.INFO
    if level not in _LEVELS:
        raise ValueError(f"{level} is not supported as logging level")
    return _LEVELS[level]


class _Delegate:
    """What spout and bolt delegates share: the logger, the context, metrics, hooks."""

    def __init__(self, component: Any, logger: logging.Logger) -> None:
        self.component = component
        self.logger = logger
        self.metrics = MetricsRegistry(component.report_metric)
        self.context: TopologyContextImpl | None = None
        self.hooks: list[Any] = []

    def log(self, message: Any, level: str | None = None) -> None:
        self.logger.log(log_level(level), message)

    def initialize_from_engine(
        self, storm_conf: dict[str, Any], storm_context: dict[str, Any]
    ) -> None:
        """The engine's ``initialize``: the user's with heronpy's config and context."""
        config = heron_config(storm_conf)
        self.context = TopologyContextImpl(config, storm_context, self.metrics,
                                           self._hook_added)
        self.hooks = self.context.task_hooks
        config[api_constants.TOPOLOGY_COMPONENT_PARALLELISM] = len(
            self.context.get_component_tasks(self.context.get_component_id()))
        for class_path in config.get(api_constants.TOPOLOGY_AUTO_TASK_HOOKS) or ():
            self.context.add_task_hook(_load_class(class_path)())
        type(self.component).initialize(self.component, config, self.context)
        self._after_initialize(storm_conf, config)
        self.context.invoke_hook_prepare()
        interval = float(config.get(EXPORT_INTERVAL_KEY, _DEFAULT_EXPORT_SECS))
        global_metrics.init(self.context, interval)

    def _after_initialize(self, storm_conf: dict[str, Any], config: dict[str, Any]) -> None:
        """Read what ``initialize`` may have set in the config."""

    def _hooked(self) -> TopologyContextImpl:
        """The context, for calling hooks: there are hooks only once
        ``initialize_from_engine`` made it (they are its ``task_hooks``)."""
        context = self.context
        assert context is not None
        return context

    def _hook_added(self) -> None:
        """A task hook was registered."""

    def close(self) -> None:
        if self.context is not None:
            self.context.invoke_hook_cleanup()


class SpoutDelegate(_Delegate):
    """A heronpy spout's instance: emits with heronpy's signature, per-tree acking."""

    def __init__(self, component: Any, storm_conf: dict[str, Any], logger: logging.Logger) -> None:
        super().__init__(component, logger)
        self.acking = reliability(storm_conf).acking
        self._keys = itertools.count(1)
        #: tracking key -> (the user's tup_id, stream, emit time)
        self._pending: dict[int, tuple[Any, str, float]] = {}
        #: (tup_id, stream) emitted since next_tuple started, acked when it returns
        self._immediate: list[tuple[Any, str]] = []
        cls = type(component)
        self._user_next_tuple: Callable[[], None] = cls.next_tuple.__get__(component)
        self._user_ack: Callable[[Any], None] = cls.ack.__get__(component)
        self._user_fail: Callable[[Any], None] = cls.fail.__get__(component)

    def emit(self, tup: Any, tup_id: Any = None, stream: str = "default",
             direct_task: int | None = None, need_task_ids: bool = False) -> list[int] | None:
        if self.hooks:
            self._hooked().invoke_hook_emit(tup, stream, None)
        key = None
        if tup_id is not None:
            if self.acking:
                key = next(self._keys)
                self._pending[key] = (tup_id, stream, time.monotonic())
            else:
                self._immediate.append((tup_id, stream))
        return StormSpout.emit(self.component, tup, key, stream, direct_task, need_task_ids)

    def next_tuple_from_engine(self) -> None:
        self._user_next_tuple()
        if self._immediate:
            done, self._immediate = self._immediate, []
            for tup_id, _stream in done:
                self._user_ack(tup_id)
                if self.hooks:
                    self._hooked().invoke_hook_spout_ack(tup_id, 0.0)
        self.metrics.flush(time.monotonic())

    def ack_from_engine(self, key: Any) -> None:
        entry = self._pending.pop(key, None)
        if entry is None:
            return  # already failed by a timeout
        self._user_ack(entry[0])
        if self.hooks:
            latency = (time.monotonic() - entry[2]) * 1000.0
            self._hooked().invoke_hook_spout_ack(entry[0], latency)

    def fail_from_engine(self, key: Any) -> None:
        entry = self._pending.pop(key, None)
        if entry is None:
            return
        self._user_fail(entry[0])
        if self.hooks:
            latency = (time.monotonic() - entry[2]) * 1000.0
            self._hooked().invoke_hook_spout_fail(entry[0], latency)


class BoltDelegate(_Delegate):
    """A heronpy bolt's instance: no auto-anchor, no auto-ack, ticks as Heron times them."""

    def __init__(self, component: Any, storm_conf: dict[str, Any], logger: logging.Logger) -> None:
        super().__init__(component, logger)
        cls = type(component)
        self._user_process: Callable[[Any], None] = cls.process.__get__(component)
        self._user_process_tick: Callable[[Any], None] = cls.process_tick.__get__(component)
        engine_tick = storm_conf.get(api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS)
        self._engine_tick = float(engine_tick) if engine_tick else 0.0
        self.tick_secs: float | None = None
        self._last_tick = time.monotonic()
        self._started = 0.0

    def emit(self, tup: Any, stream: str = "default", anchors: Any = None,
             direct_task: int | None = None, need_task_ids: bool = False) -> list[int] | None:
        if self.hooks:
            self._hooked().invoke_hook_emit(tup, stream, None)
        return StormBolt.emit(self.component, tup, stream, anchors, direct_task, need_task_ids)

    def ack(self, tup: Tuple) -> None:
        StormBolt.ack(self.component, tup)
        if self.hooks:
            self._hooked().invoke_hook_bolt_ack(tup, self._latency_ms())

    def fail(self, tup: Tuple) -> None:
        StormBolt.fail(self.component, tup)
        if self.hooks:
            self._hooked().invoke_hook_bolt_fail(tup, self._latency_ms())

    def _latency_ms(self) -> float:
        return (time.monotonic() - self._started) * 1000.0 if self._started else 0.0

    def _after_initialize(self, storm_conf: dict[str, Any], config: dict[str, Any]) -> None:
        value = config.get(api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS)
        if value is None:
            return
        secs = float(value)
        if secs <= 0:
            raise ValueError(f"{api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS} must be "
                             f"positive, got {value!r}")
        self.tick_secs = secs

    def _hook_added(self) -> None:
        # bolt_execute needs a wrapper around process: installed only when a hook exists
        self.component.process = self.process_with_hooks

    def process_with_hooks(self, tup: Tuple) -> None:
        self._started = time.monotonic()
        self._user_process(tup)
        latency = (time.monotonic() - self._started) * 1000.0
        self._hooked().invoke_hook_bolt_execute(tup, latency)

    def process_tick_from_engine(self, tup: Tuple) -> None:
        now = time.monotonic()
        self.metrics.flush(now)
        if self.tick_secs is None:
            return
        # engine ticks come every _engine_tick seconds: deliver the one nearest the due time
        if now - self._last_tick >= self.tick_secs - self._engine_tick / 2:
            self._last_tick = now
            self._user_process_tick(tup)


def bind(component: Any, storm_conf: dict[str, Any], logger: logging.Logger) -> None:
    """Give a heronpy component bound to an engine its delegate and entry points."""
    delegate: SpoutDelegate | BoltDelegate
    if isinstance(component, StormSpout):
        delegate = SpoutDelegate(component, storm_conf, logger)
    else:
        delegate = BoltDelegate(component, storm_conf, logger)
    component._runtime = delegate
    if component.delegate is None:
        component.delegate = delegate
    component.logger = getattr(component.delegate, "logger", logger)
    component.initialize = delegate.initialize_from_engine
    if isinstance(delegate, SpoutDelegate):
        component.next_tuple = delegate.next_tuple_from_engine
        component.ack = delegate.ack_from_engine
        component.fail = delegate.fail_from_engine
    else:
        component.process_tick = delegate.process_tick_from_engine
