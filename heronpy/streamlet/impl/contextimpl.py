"""``ContextImpl``: the streamlet ``Context`` over a heronpy ``TopologyContext``."""

from __future__ import annotations

from typing import Any

from heronpy.api.topology_context import TopologyContext
from heronpy.streamlet.context import Context


class ContextImpl(Context):
    """Answers from the task's topology context; ``emit`` emits on the operator's output."""

    def __init__(self, top_context: TopologyContext, state: Any, emitter: Any) -> None:
        self._top_context = top_context
        self._state = state
        self._emitter = emitter

    def get_task_id(self) -> int:
        return self._top_context.get_task_id()

    def get_config(self) -> dict[str, Any]:
        return self._top_context.get_cluster_config()

    def get_stream_name(self) -> Any:
        sources = self._top_context.get_this_sources() or {}
        return next(iter(sources)).id if sources else None

    def _tasks(self) -> list[int]:
        return sorted(self._top_context.get_component_tasks(
            self._top_context.get_component_id()))

    def get_num_partitions(self) -> int:
        return len(self._tasks())

    def get_partition_index(self) -> int:
        return self._tasks().index(self.get_task_id())

    def get_state(self) -> Any:
        return self._state

    def emit(self, values: Any) -> None:
        self._emitter.emit_context_value(values)
