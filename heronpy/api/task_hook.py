"""heronpy's task hooks: ``ITaskHook`` and the info tuples passed to it.

Hooks are registered with ``context.add_task_hook(hook)`` (usually in ``initialize``) and
are called from the component's own thread: ``prepare`` after ``initialize``, ``emit`` on
every emit, ``spout_ack``/``spout_fail`` when a spout's tuple tree completes or fails,
``bolt_execute`` after ``process``, ``bolt_ack``/``bolt_fail`` on a bolt's ack and fail.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import namedtuple
from typing import Any


class ITaskHook:
    """ITaskHook is an interface for defining task hooks for a topology."""

    @abstractmethod
    def prepare(self, conf: dict[str, Any], context: Any) -> None:
        """Called after the spout/bolt's initialize() method is called."""

    @abstractmethod
    def clean_up(self) -> None:
        """Called just before the spout/bolt's cleanup method is called."""

    @abstractmethod
    def emit(self, emit_info: EmitInfo) -> None:
        """Called every time a tuple is emitted in spout/bolt."""

    @abstractmethod
    def spout_ack(self, spout_ack_info: SpoutAckInfo) -> None:
        """Called in spout every time a tuple gets acked."""

    @abstractmethod
    def spout_fail(self, spout_fail_info: SpoutFailInfo) -> None:
        """Called in spout every time a tuple gets failed."""

    @abstractmethod
    def bolt_execute(self, bolt_execute_info: BoltExecuteInfo) -> None:
        """Called in bolt every time a tuple gets executed."""

    @abstractmethod
    def bolt_ack(self, bolt_ack_info: BoltAckInfo) -> None:
        """Called in bolt every time a tuple gets acked."""

    @abstractmethod
    def bolt_fail(self, bolt_fail_info: BoltFailInfo) -> None:
        """Called in bolt every time a tuple gets failed."""


EmitInfo = namedtuple("EmitInfo", "values, stream_id, task_id, out_tasks")
SpoutAckInfo = namedtuple("SpoutAckInfo", "message_id, spout_task_id, complete_latency_ms")
SpoutFailInfo = namedtuple("SpoutFailInfo", "message_id, spout_task_id, fail_latency_ms")
BoltExecuteInfo = namedtuple("BoltExecuteInfo",
                             "heron_tuple, executing_task_id, execute_latency_ms")
BoltAckInfo = namedtuple("BoltAckInfo", "heron_tuple, acking_task_id, process_latency_ms")
BoltFailInfo = namedtuple("BoltFailInfo", "heron_tuple, failing_task_id, fail_latency_ms")
