"""``TopologyContextImpl``: heronpy's context over the Storm context dict our engines give.

Both engines hand a component Storm's context (``taskid``, ``componentid``,
``task->component``, ``source->stream->grouping``...); this answers heronpy's questions
from it. Metrics and hooks registered here are kept for the component's runtime adapter
(``heronpy.api.component.runtime``), which reads the metrics every bucket and calls the
hooks, as Heron's instance does.
"""

from __future__ import annotations

import os
import time
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from heronpy.api.metrics import IMetric
from heronpy.api.stream import Grouping
from heronpy.api.task_hook import (
    BoltAckInfo,
    BoltExecuteInfo,
    BoltFailInfo,
    EmitInfo,
    ITaskHook,
    SpoutAckInfo,
    SpoutFailInfo,
)
from heronpy.api.topology_context import SourceStream, TopologyContext

#: heronpy's key of ``get_sources``: the fields of topology.proto's StreamId
StreamId = namedtuple("StreamId", "id, component_name")

#: where the compiled topology records the file it was loaded from (get_topology_pex_path)
TOPOLOGY_FILE_KEY = "heronpy.topology.file"

_GTYPES = {"SHUFFLE": Grouping.SHUFFLE, "ALL": Grouping.ALL, "NONE": Grouping.NONE,
           "DIRECT": Grouping.DIRECT, "LOCAL_OR_SHUFFLE": Grouping.SHUFFLE, "FIELDS": 2}


class MetricsRegistry:
    """The metrics a task registered, each read every its own bucket."""

    def __init__(self, report: Callable[[str, Any], None]) -> None:
        self._report = report
        self._entries: list[list[Any]] = []  # [name, metric, bucket secs, next due]
        #: the earliest due time, so a caller's check costs one comparison
        self.next_due = float("inf")

    def register(self, name: str, metric: IMetric, bucket: float) -> None:
        if not isinstance(metric, IMetric):
            raise TypeError(f"register_metric(): {name!r} is {type(metric).__name__}, "
                            "not a heronpy.api.metrics.IMetric")
        bucket = float(bucket)
        if bucket <= 0:
            raise ValueError(f"register_metric(): time bucket of {name!r} must be positive")
        due = time.monotonic() + bucket
        self._entries.append([name, metric, bucket, due])
        self.next_due = min(self.next_due, due)

    def flush(self, now: float) -> None:
        """Report every metric whose bucket ended (a dict value as ``name/key``)."""
        if now < self.next_due:
            return
        for entry in self._entries:
            name, metric, bucket, due = entry
            if now < due:
                continue
            entry[3] = now + bucket
            value = metric.get_value_and_reset()
            if isinstance(value, dict):
                for key, item in value.items():
                    if key is not None and item is not None:
                        self._report(f"{name}/{key}", item)
            elif value is not None:
                self._report(name, value)
        self.next_due = min(entry[3] for entry in self._entries)


class TopologyContextImpl(TopologyContext):
    """heronpy's context for one task of our engines."""

    def __init__(
        self,
        config: dict[str, Any],
        storm_context: dict[str, Any],
        metrics: MetricsRegistry,
        on_hook_added: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self._storm = storm_context
        self._metrics = metrics
        self._on_hook_added = on_hook_added
        self.task_hooks: list[ITaskHook] = []

    def get_task_id(self) -> int:
        return int(self._storm.get("taskid", -1))

    def get_component_id(self) -> str:
        return str(self._storm.get("componentid", ""))

    def get_cluster_config(self) -> dict[str, Any]:
        return self.config

    def get_topology_name(self) -> str:
        return str(self.config.get("topology.name", ""))

    def register_metric(self, name: str, metric: IMetric, time_bucket_in_sec: float) -> None:
        self._metrics.register(name, metric, time_bucket_in_sec)

    def get_metrics_collector(self) -> TopologyContextImpl:
        """Heron's collector is where ``register_metric`` goes: here, this context."""
        return self

    def get_sources(self, component_id: str) -> dict[SourceStream, Any] | None:
        """This component's inputs; None for another component (our context holds only
        this component's subscriptions)."""
        if component_id != self.get_component_id():
            return None
        ret: dict[SourceStream, Any] = {}
        for source, streams in self._storm.get("source->stream->grouping", {}).items():
            for stream, grouping in streams.items():
                kind = grouping.get("type", "")
                gtype = _GTYPES.get(kind, Grouping.SHUFFLE)
                if kind == "FIELDS" and not grouping.get("fields"):
                    gtype = Grouping.LOWEST  # Storm writes global as fields with none
                ret[StreamId(id=stream, component_name=source)] = gtype
        return ret

    def get_component_tasks(self, component_id: str) -> list[int]:
        mapping = self._storm.get("task->component", {})
        return sorted(int(task) for task, comp in mapping.items() if comp == component_id)

    def add_task_hook(self, task_hook: ITaskHook) -> None:
        if not isinstance(task_hook, ITaskHook):
            raise TypeError("In add_task_hook(): attempt to add non ITaskHook instance, "
                            f"given: {type(task_hook)}")
        self.task_hooks.append(task_hook)
        if self._on_hook_added is not None:
            self._on_hook_added()

    def get_topology_pex_path(self) -> str:
        """Heron's pex; here the topology file the topology was loaded from (no pex yet)."""
        path = self.config.get(TOPOLOGY_FILE_KEY) or ""
        return os.path.abspath(path) if path else ""

    # -- hooks, called by the runtime adapter ---------------------------------------

    def invoke_hook_prepare(self) -> None:
        for hook in self.task_hooks:
            hook.prepare(self.get_cluster_config(), self)

    def invoke_hook_cleanup(self) -> None:
        for hook in self.task_hooks:
            hook.clean_up()

    def invoke_hook_emit(self, values: Any, stream_id: str, out_tasks: Any) -> None:
        info = EmitInfo(values=values, stream_id=stream_id, task_id=self.get_task_id(),
                        out_tasks=out_tasks)
        for hook in self.task_hooks:
            hook.emit(info)

    def invoke_hook_spout_ack(self, message_id: Any, complete_latency_ms: float) -> None:
        info = SpoutAckInfo(message_id=message_id, spout_task_id=self.get_task_id(),
                            complete_latency_ms=complete_latency_ms)
        for hook in self.task_hooks:
            hook.spout_ack(info)

    def invoke_hook_spout_fail(self, message_id: Any, fail_latency_ms: float) -> None:
        info = SpoutFailInfo(message_id=message_id, spout_task_id=self.get_task_id(),
                             fail_latency_ms=fail_latency_ms)
        for hook in self.task_hooks:
            hook.spout_fail(info)

    def invoke_hook_bolt_execute(self, heron_tuple: Any, execute_latency_ms: float) -> None:
        info = BoltExecuteInfo(heron_tuple=heron_tuple, executing_task_id=self.get_task_id(),
                               execute_latency_ms=execute_latency_ms)
        for hook in self.task_hooks:
            hook.bolt_execute(info)

    def invoke_hook_bolt_ack(self, heron_tuple: Any, process_latency_ms: float) -> None:
        info = BoltAckInfo(heron_tuple=heron_tuple, acking_task_id=self.get_task_id(),
                           process_latency_ms=process_latency_ms)
        for hook in self.task_hooks:
            hook.bolt_ack(info)

    def invoke_hook_bolt_fail(self, heron_tuple: Any, fail_latency_ms: float) -> None:
        info = BoltFailInfo(heron_tuple=heron_tuple, failing_task_id=self.get_task_id(),
                            fail_latency_ms=fail_latency_ms)
        for hook in self.task_hooks:
            hook.bolt_fail(info)
