"""``Component``: what spouts and bolts share, with pystorm's behaviour.

A component runs in one of two modes:

* **multi-lang** (``run()``): handshake on the component's streams, logging
  set up from the ``pystorm.log.*`` keys, then the read loop; outputs go out
  as protocol messages through a :class:`~.collector.ProtocolCollector`.
* **in-process** (``_bind()``, used by :mod:`.hosting`): an engine supplies
  conf, context, a collector and a logger, and calls the per-tuple entry
  points directly.  Nothing global is touched (no root-logger handlers, no
  ``sys.stdout`` swap, no signal handlers).

User-facing names, signatures, defaults and messages follow pystorm 3.1.4.
"""
from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from logging.handlers import RotatingFileHandler
from os.path import join
from traceback import format_exc
from typing import IO, Any, NoReturn

from .collector import OutputCollector, ProtocolCollector, dispatch_message
from .dsl.component import ComponentSpec
from .exceptions import StormWentAwayError
from .serializers import SERIALIZERS, Serializer
from .tuple import Tuple

__all__ = ["Component", "StormHandler", "LogStream", "Tuple", "component_identity"]

log = logging.getLogger(__name__)

# Storm's log levels (STORM-414) and the Python levels for pystorm.log.level.
_STORM_LOG_TRACE, _STORM_LOG_DEBUG, _STORM_LOG_INFO, _STORM_LOG_WARN, _STORM_LOG_ERROR = range(5)
_STORM_LOG_LEVELS = {"trace": _STORM_LOG_TRACE, "debug": _STORM_LOG_DEBUG, "info": _STORM_LOG_INFO,
                     "warn": _STORM_LOG_WARN, "warning": _STORM_LOG_WARN, "error": _STORM_LOG_ERROR,
                     "critical": _STORM_LOG_ERROR}
_PYTHON_LOG_LEVELS = {
    "critical": logging.CRITICAL,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
    "trace": logging.DEBUG,
}

# Component loggers keep pystorm's names so users' logging configuration and
# log lines look the same after the switch.
_COMPONENT_LOGGER_PREFIX = "pystorm.component"
_DEFAULT_LOG_FILE = "pystorm_{topology_name}_{component_name}_{task_id}_{pid}.log"
_FILE_LOG_FORMAT = "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
_STORM_LOG_FORMAT = "%(asctime)s - %(name)s - %(message)s"


def remote_pdb_handler(signum: int, frame: Any) -> None:
    """Open a remote debugger where the process was interrupted.

    Installed for ``rdb_signal`` so a stuck multi-lang component can be
    inspected; needs the optional ``remote_pdb`` package.
    """
    try:
        from remote_pdb import RemotePdb
        RemotePdb(host="127.0.0.1", port=0).set_trace(frame=frame)
    except ImportError:
        log.warning("remote_pdb unavailable.  Please install remote_pdb to allow remote debugging.")
    signal.signal(signum, remote_pdb_handler)


class StormHandler(logging.Handler):
    """Logging handler that sends records to Storm as ``log`` commands.

    Filtering happens here, on the Python side, so debug records cost nothing
    on the wire in production; ``Component.log`` by contrast always sends.
    """

    def __init__(self, serializer: Serializer) -> None:
        super().__init__()
        self.serializer = serializer

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = self.format(record)
            level = _STORM_LOG_LEVELS.get(record.levelname.lower(), _STORM_LOG_INFO)
            self.serializer.send_message({"command": "log", "msg": str(msg), "level": level})
        except Exception:
            self.handleError(record)


class LogStream:
    """Stands in for ``sys.stdout`` so ``print`` cannot corrupt the protocol."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def write(self, message: str) -> None:
        if message.strip() == "":
            return
        try:
            self.logger.info(message)
        except BaseException:
            # Logging itself is broken: give the process its real stdout back
            # so the failure is visible.
            sys.stdout = sys.__stdout__
            raise

    def flush(self) -> None:
        """Accept ``sys.stdout.flush()`` from user code."""


def not_a_tuple(values: object) -> TypeError:
    """pystorm's error for emitting something that is not a list or tuple."""
    return TypeError(
        f"All Tuples must be either lists or tuples, received {type(values)!r} instead."
    )


def component_identity(storm_conf: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    """The identity attributes pystorm derives from the handshake.

    Shared by multi-lang setup and in-process binding (for our classes and
    for pystorm's) so both see the same ``component_name`` fallback rules.
    """
    task_id = context.get("taskid", "")
    component_name = context.get("componentid")
    if component_name is None:  # Storm < 0.10 sends no componentid.
        component_name = context.get("task->component", {}).get(str(task_id), "")
    return {"topology_name": storm_conf.get("topology.name", ""), "task_id": task_id,
            "component_name": component_name, "debug": storm_conf.get("topology.debug", False),
            "storm_conf": storm_conf, "context": context}


class Component:
    """Base class for spouts and bolts.

    ``outputs``, ``par`` and ``config`` are the streamparse class attributes
    the topology DSL reads.  ``exit_on_exception`` decides whether ``run()``
    exits after reporting an exception from user code.
    """

    exit_on_exception = True
    # the user's: field names or Stream objects, a parallelism or {"parallelism": n, ...}
    outputs: Sequence[Any] | None = None
    par: int | dict[str, Any] = 1
    config: dict[str, Any] | None = None

    def __init__(self, input_stream: IO[Any] = sys.stdin, output_stream: IO[Any] = sys.stdout,
                 rdb_signal: str | int | None = "SIGUSR1", serializer: str = "json") -> None:
        # None until the handshake (run) or an engine (_bind) gives them: see
        # component_identity for where each comes from
        self.topology_name: str | None = None
        self.task_id: int | None = None
        self.component_name: str | None = None
        self.debug: bool | None = None
        self.storm_conf: dict[str, Any] | None = None
        self.context: dict[str, Any] | None = None
        self.pid = os.getpid()
        self.logger: logging.Logger | None = None
        # Messages read while waiting for task ids, and task ids read while
        # waiting for a command: the two interleave on one stream.
        self._pending_commands: deque[Any] = deque()
        self._pending_task_ids: deque[list[int]] = deque()
        self._reader_lock = threading.RLock()
        self._writer_lock = threading.RLock()
        if serializer not in SERIALIZERS:
            raise ValueError(f"Unknown serializer: {serializer}")
        self.serializer = SERIALIZERS[serializer](input_stream, output_stream, self._reader_lock,
                                                  self._writer_lock)
        # Kept to decide whether print() must be redirected (see _setup_logging).
        self._output_stream = output_stream
        self._collector: OutputCollector = ProtocolCollector(self)
        self._bound = False
        # the user's: a signal number or name; a name signal does not know reaches
        # signal.signal as given, which refuses it, as under pystorm
        signum: Any = rdb_signal
        if isinstance(rdb_signal, str) and hasattr(signal, rdb_signal):
            signum = getattr(signal, rdb_signal)
        if signum is not None:
            signal.signal(signum, remote_pdb_handler)

    @classmethod
    def spec(cls, *args: Any, **kwargs: Any) -> ComponentSpec:
        """The component's spec in a topology; a bare Component has none and raises.

        (Typed as returning a spec, which the subclasses' ``spec`` return.)
        """
        raise TypeError(f"Specifications should either be bolts or spouts. Given: {cls!r}")

    @staticmethod
    def is_heartbeat(tup: Tuple) -> bool:
        """:returns: Whether or not the given Tuple is a heartbeat."""
        return tup.task == -1 and tup.stream == "__heartbeat"

    # -- hooks --------------------------------------------------------------

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Called once after the handshake, before any tuple or command."""

    def _run(self) -> None:
        """One iteration of the run loop; subclasses implement it."""
        raise NotImplementedError

    # -- setup --------------------------------------------------------------

    def _set_identity(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        for name, value in component_identity(storm_conf, context).items():
            setattr(self, name, value)

    def _setup_from_context(self, context: dict[str, Any]) -> None:
        """Derive per-class state from the context (bolts: values types)."""

    def _setup_component(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Multi-lang setup after the handshake: identity, then logging."""
        self._set_identity(storm_conf, context)
        self._setup_logging()
        self._setup_from_context(context)

    def _setup_logging(self) -> None:
        """Configure logging from the ``pystorm.log.*`` keys, as pystorm does.

        The handler goes on the root logger because the component owns the
        whole process in multi-lang mode.
        """
        conf, component_name = self.storm_conf, self.component_name
        assert conf is not None and component_name is not None  # _set_identity ran first
        logger = logging.getLogger(".".join((_COMPONENT_LOGGER_PREFIX, component_name)))
        self.logger = logger
        log_path = conf.get("pystorm.log.path")
        log_file_name = conf.get("pystorm.log.file", _DEFAULT_LOG_FILE)
        level_name = conf.get("pystorm.log.level", "info")
        handler: logging.Handler
        if log_path:
            log_file = join(log_path, log_file_name.format(topology_name=self.topology_name,
                                                           component_name=self.component_name,
                                                           task_id=self.task_id, pid=self.pid))
            handler = RotatingFileHandler(
                log_file,
                maxBytes=conf.get("pystorm.log.max_bytes", 1000000),
                backupCount=conf.get("pystorm.log.backup_count", 10),
            )
            log_format = conf.get("pystorm.log.format", _FILE_LOG_FORMAT)
        else:
            self.log('pystorm StormHandler logging enabled, so all messages at levels greater than '
                     f'"pystorm.log.level" ({level_name}) will be sent to Storm.')
            handler = StormHandler(self.serializer)
            log_format = conf.get("pystorm.log.format", _STORM_LOG_FORMAT)
        level = logging.DEBUG if self.debug else _PYTHON_LOG_LEVELS.get(level_name, logging.INFO)
        handler.setLevel(level)
        handler.setFormatter(logging.Formatter(log_format))
        logging.getLogger().addHandler(handler)
        logger.setLevel(level)
        logging.getLogger("pystorm").setLevel(level)
        logging.getLogger(__name__.rsplit(".", 1)[0]).setLevel(level)
        # pystorm compares the serializer's *wrapped* stream with sys.stdout,
        # which never matches, so print() leaks into the protocol (streamparse
        # issue 432).  We compare the stream we were given, as intended.
        if self._output_stream is sys.stdout:
            sys.stdout = LogStream(logging.getLogger("pystorm.stdout"))

    def _bind(
        self,
        storm_conf: dict[str, Any],
        context: dict[str, Any],
        collector: OutputCollector,
        logger: logging.Logger,
    ) -> None:
        """In-process setup: what the handshake gives, minus anything global.

        Sets the same attributes ``_setup_component`` sets, uses ``logger``
        as ``self.logger`` and sends every output to ``collector``.  It adds
        no logging handlers and leaves ``sys.stdout`` alone, so many
        components can share one process.  Call ``initialize`` afterwards.
        """
        self._set_identity(storm_conf, context)
        self.pid = os.getpid()
        self.logger = logger
        self._collector = collector
        self._bound = True
        self._setup_from_context(context)

    def _close(self) -> None:
        """Release what the component started (in-process only)."""

    # -- reading ------------------------------------------------------------

    def read_message(self) -> Any:
        """Read a message from Storm via serializer."""
        return self.serializer.read_message()

    def read_task_ids(self) -> list[int]:
        """Next task-id list; commands read meanwhile are kept for later."""
        if self._pending_task_ids:
            return self._pending_task_ids.popleft()
        msg = self.read_message()
        while not isinstance(msg, list):
            self._pending_commands.append(msg)
            msg = self.read_message()
        return msg

    def read_command(self) -> Any:
        """Next command or tuple; task-id lists read meanwhile are kept."""
        if self._pending_commands:
            return self._pending_commands.popleft()
        msg = self.read_message()
        while isinstance(msg, list):
            self._pending_task_ids.append(msg)
            msg = self.read_message()
        return msg

    def read_handshake(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Read Storm's handshake, write the pid file and answer with the pid."""
        msg = self.read_message()
        pid_dir, conf, context = msg["pidDir"], msg["conf"], msg["context"]
        open(join(pid_dir, str(self.pid)), "w").close()
        self.send_message({"pid": self.pid})
        return conf, context

    # -- writing ------------------------------------------------------------

    def send_message(self, message: dict[str, Any]) -> None:
        """Send a protocol message; non-dicts are logged and dropped.

        In-process the dict is turned into the equivalent collector call, so
        user code that writes protocol messages by hand keeps working.
        """
        if not isinstance(message, dict):
            logger = self.logger if self.logger else log
            logger.error("%s.%d attempted to send a non dict message to Storm: %r",
                         self.component_name, self.pid, message)
            return
        if not self._bound:
            self.serializer.send_message(message)
            return
        task_ids = dispatch_message(self._collector, message)
        if task_ids is not None:
            self._pending_task_ids.append(task_ids)

    def emit(
        self,
        tup: list[Any] | tuple[Any, ...],
        tup_id: object = None,
        stream: str | None = None,
        anchors: list[Any] | None = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit a tuple; returns the target task ids only if ``need_task_ids``.

        A direct emit's task ids are ``[direct_task]``, known without asking.
        """
        if not isinstance(tup, (list, tuple)):
            raise not_a_tuple(tup)
        task_ids = self._collector.emit(tup, stream, anchors, direct_task, need_task_ids, tup_id)
        if not need_task_ids:
            return None
        return [direct_task] if direct_task is not None else task_ids

    def log(self, message: object, level: str | None = None) -> None:
        """Send ``message`` to Storm's log regardless of local log levels."""
        storm_level = _STORM_LOG_INFO if level is None else _STORM_LOG_LEVELS.get(
            level, _STORM_LOG_INFO)
        self._collector.log(str(message), storm_level)

    def raise_exception(self, exception: BaseException, tup: object = None) -> None:
        """Report an exception to Storm (``reportError``), then sync.

        Call it from an ``except`` block: the traceback is the one being
        handled.
        """
        if tup:
            message = "Python {exception_name} raised while processing Tuple {tup!r}\n{traceback}"
        else:
            message = "Python {exception_name} raised\n{traceback}"
        message = message.format(
            exception_name=exception.__class__.__name__, tup=tup, traceback=format_exc()
        )
        self._collector.error(str(message))
        self._collector.sync()

    def report_metric(self, name: str, value: object) -> None:
        """Report a custom metric (Storm needs it registered Java-side)."""
        self._collector.metric(name, value)

    # -- run loop -----------------------------------------------------------

    def run(self) -> None:
        """Multi-lang main loop.  Do not override.

        Exits with status 2 when Storm goes away and 1 after reporting an
        exception from user code (unless ``exit_on_exception`` is false).
        """
        storm_conf, context = self.read_handshake()
        self._setup_component(storm_conf, context)
        self.initialize(storm_conf, context)
        while True:
            try:
                self._run()
            except StormWentAwayError:
                log.info("Exiting because parent Storm process went away.")
                self._exit(2)
            except Exception as exc:
                self._report_run_exception(exc)

    def _report_run_exception(self, exc: BaseException) -> None:
        """What ``run()`` does with an exception from user code.

        Must be called while ``exc`` is being handled (tracebacks are taken
        from the current exception).
        """
        log_msg = f"Exception in {self.__class__.__name__}.run()"
        exc_info = sys.exc_info()
        try:
            # set by the setup run() did first; None raises here, handled below
            self.logger.error(log_msg, exc_info=True)  # type: ignore[union-attr]
            self._handle_run_exception(exc)
        except StormWentAwayError:
            log.error(log_msg, exc_info=exc_info)
            log.info("Exiting because parent Storm process went away.")
            self._exit(2)
        except Exception:
            log.error(log_msg, exc_info=exc_info)
            log.error("While trying to handle previous exception...", exc_info=sys.exc_info())
        if self.exit_on_exception:
            self._exit(1)

    def _exit(self, status_code: int) -> NoReturn:
        """Exit even if other threads are still looping.

        ``sys.exit`` would wait for non-daemon threads; ``os._exit`` does not,
        but it skips cleanup, so it is only used when threads are alive.
        """
        exit_func: Callable[[int], NoReturn]
        if threading.active_count() > 1:
            exit_func = os._exit
        else:
            exit_func = sys.exit
        exit_func(status_code)

    def _handle_run_exception(self, exc: BaseException) -> None:
        """Report an exception from the run loop before exiting."""
        self.raise_exception(exc)
