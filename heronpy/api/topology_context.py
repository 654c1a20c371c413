"""heronpy's ``TopologyContext`` interface; the engines' implementation is
``heronpy.api.component.context.TopologyContextImpl``."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Protocol


class SourceStream(Protocol):
    """A key of ``get_sources``: heronpy's ``StreamId`` (topology.proto's fields)."""

    @property
    def id(self) -> str: ...

    @property
    def component_name(self) -> str: ...


class TopologyContext:
    """What a spout or bolt can learn about the running topology and its place in it."""

    @abstractmethod
    def get_task_id(self) -> int:
        """The task id of this component's task."""

    @abstractmethod
    def get_component_id(self) -> str:
        """The name of this component."""

    @abstractmethod
    def get_cluster_config(self) -> dict[str, Any]:
        """The config of this component (topology config merged with its own), auto-typed."""

    @abstractmethod
    def get_topology_name(self) -> str:
        """The name of the topology."""

    @abstractmethod
    def register_metric(self, name: str, metric: Any, time_bucket_in_sec: float) -> None:
        """Register ``metric``: read and reported every ``time_bucket_in_sec`` seconds."""

    @abstractmethod
    def get_sources(self, component_id: str) -> dict[SourceStream, Any] | None:
        """The declared inputs of ``component_id``: ``{StreamId: gtype}``, or None."""

    def get_this_sources(self) -> dict[SourceStream, Any] | None:
        """The declared inputs of this component."""
        return self.get_sources(self.get_component_id())

    @abstractmethod
    def get_component_tasks(self, component_id: str) -> list[int]:
        """The task ids of ``component_id``."""

    @abstractmethod
    def add_task_hook(self, task_hook: Any) -> None:
        """Register an ``ITaskHook`` for this task."""
