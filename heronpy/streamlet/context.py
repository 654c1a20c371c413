"""``Context``: what a Generator or TransformOperator learns about its task at setup."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any


class Context:
    """Runtime information for user operators (transform, generators): task, config,
    partitions, state, and ``emit``."""

    @abstractmethod
    def get_task_id(self) -> int:
        """The task id of this instance of the operator."""

    @abstractmethod
    def get_config(self) -> dict[str, Any]:
        """The topology's config as this task sees it."""

    @abstractmethod
    def get_stream_name(self) -> Any:
        """The stream this operator consumes (None for a source)."""

    @abstractmethod
    def get_num_partitions(self) -> int:
        """How many partitions (tasks) this operator has."""

    def get_partition_index(self) -> int:
        """This task's index among the operator's tasks (0 .. num_partitions - 1)."""
        raise NotImplementedError

    @abstractmethod
    def get_state(self) -> Any:
        """The task's state (generators and transform operators; saved and restored under
        EFFECTIVELY_ONCE)."""

    @abstractmethod
    def emit(self, values: Any) -> None:
        """Emit ``values`` as one element of the operator's output streamlet."""
