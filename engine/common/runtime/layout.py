"""Task ids and the Storm-shaped ``context`` dict each task receives.

Storm numbers tasks per component in sorted component-id order starting at 1 (system
components included), and hands each task a ``TopologyContext`` rendered as JSON; pystorm
builds the values namedtuples from its ``source->stream->fields``. We reproduce both so
components that read their context behave as they do under Storm.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ACKER_COMPONENT = "__acker"
SYSTEM_COMPONENT = "__system"
SYSTEM_TASK_ID = -1

_GROUPING_NAMES = {
    "shuffle": "SHUFFLE", "fields": "FIELDS", "all": "ALL", "none": "NONE",
    "direct": "DIRECT", "local_or_shuffle": "LOCAL_OR_SHUFFLE", "custom": "CUSTOM_OBJECT",
}


def _grouping_json(kind: str, fields: tuple[str, ...]) -> dict[str, Any]:
    if kind == "global":  # Storm renders global as fields grouping with no fields
        return {"type": "FIELDS", "fields": []}
    out: dict[str, Any] = {"type": _GROUPING_NAMES.get(kind, kind.upper())}
    if kind == "fields":
        out["fields"] = list(fields)
    return out


@dataclass
class TaskLayout:
    """Which task ids belong to which component."""

    tasks_by_component: dict[str, list[int]] = field(default_factory=dict)

    @property
    def component_by_task(self) -> dict[int, str]:
        return {t: c for c, ts in self.tasks_by_component.items() for t in ts}


def assign_tasks(plan: Any, num_tasks: Mapping[str, int], ackers: int) -> TaskLayout:
    """Number tasks as Storm does: components sorted by id, ids from 1, ``__system`` is -1."""
    counts = dict(num_tasks)
    if ackers:
        counts[ACKER_COMPONENT] = ackers
    layout = TaskLayout()
    next_id = 1
    for name in sorted(counts):
        layout.tasks_by_component[name] = list(range(next_id, next_id + counts[name]))
        next_id += counts[name]
    layout.tasks_by_component[SYSTEM_COMPONENT] = [SYSTEM_TASK_ID]
    return layout


def build_context(plan: Any, layout: TaskLayout, component: str, task_id: int) -> dict[str, Any]:
    """The ``context`` dict of ``TopologyContext.toJSONString()`` for one task."""
    comp = plan.components[component]
    task_to_component = {str(t): c for t, c in layout.component_by_task.items()}
    stream_target_grouping: dict[str, dict[str, Any]] = {}
    for stream in comp.outputs:
        targets = {}
        for consumer, inp in plan.consumers(component, stream):
            targets[consumer.name] = _grouping_json(inp.grouping, tuple(inp.fields))
        stream_target_grouping[stream] = targets
    source_stream_grouping: dict[str, dict[str, Any]] = {}
    source_stream_fields: dict[str, dict[str, list[str]]] = {}
    for inp in comp.inputs:
        source_stream_grouping.setdefault(inp.source, {})[inp.stream] = _grouping_json(
            inp.grouping, tuple(inp.fields))
        # Storm lists every stream of each source component, not only the subscribed ones.
        source = plan.components[inp.source]
        source_stream_fields[inp.source] = {
            s.name: list(s.fields) for s in source.outputs.values()}
    return {
        "taskid": task_id,
        "componentid": component,
        "task->component": task_to_component,
        "streams": list(comp.outputs),
        "stream->outputfields": {s.name: list(s.fields) for s in comp.outputs.values()},
        "stream->target->grouping": stream_target_grouping,
        "source->stream->grouping": source_stream_grouping,
        "source->stream->fields": source_stream_fields,
    }
