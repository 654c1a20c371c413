"""Errors raised while turning a topology into a logical plan.

One hierarchy for the planning surface, so the CLI can catch ``PlanningError`` and
print one clean line. Every message names the component, stream and field involved
and says what to change; the same names are kept as attributes for programs.
"""

from __future__ import annotations

__all__ = [
    "CycleError",
    "DirectGroupingError",
    "DuplicateComponentError",
    "DuplicateFieldError",
    "InvalidComponentError",
    "InvalidConfigError",
    "InvalidGroupingError",
    "InvalidParallelismError",
    "MalformedPlanError",
    "MissingInputsError",
    "MissingOutputsError",
    "NoTopologyClassError",
    "ParallelismEnvironmentError",
    "PlanningError",
    "ReservedNameError",
    "SpoutInputsError",
    "TopologyFileNotFoundError",
    "TopologyImportError",
    "TopologyLoadError",
    "UnknownComponentError",
    "UnknownFieldError",
    "UnknownStreamError",
    "UnsupportedComponentError",
    "UnsupportedGroupingError",
]


class PlanningError(Exception):
    """A topology cannot be planned; the message says what is wrong and how to fix it."""

    def __init__(
        self,
        message: str,
        *,
        component: str | None = None,
        stream: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.component = component
        self.stream = stream
        self.field = field


# -- references between components -------------------------------------------------


class UnknownComponentError(PlanningError):
    """An input names a source component the topology does not have."""


class UnknownStreamError(PlanningError):
    """An input names a stream its source component does not declare."""


class UnknownFieldError(PlanningError):
    """A fields grouping names a field the subscribed stream does not have."""


class DirectGroupingError(PlanningError):
    """A direct grouping subscribes to a stream not declared ``direct=True``."""


class InvalidGroupingError(PlanningError):
    """An input's grouping is not one the engines know, or is incomplete."""


class UnsupportedGroupingError(PlanningError):
    """A grouping the engines cannot run (a Java custom grouping)."""


class CycleError(PlanningError):
    """Components subscribe to each other's default streams in a loop."""

    def __init__(self, message: str, *, cycle: tuple[str, ...]) -> None:
        super().__init__(message, component=cycle[0] if cycle else None)
        self.cycle = cycle


# -- components ------------------------------------------------------------------------


class DuplicateComponentError(PlanningError):
    """Two components share a name."""


class DuplicateFieldError(PlanningError):
    """A stream lists the same field twice (Storm's Fields rejects it too)."""


class MissingOutputsError(PlanningError):
    """A spout declares no output stream."""


class MissingInputsError(PlanningError):
    """A bolt subscribes to nothing."""


class SpoutInputsError(PlanningError):
    """A spout has inputs; spouts are sources and cannot subscribe to streams."""


class InvalidParallelismError(PlanningError):
    """A parallelism that is not a positive integer."""


class ParallelismEnvironmentError(InvalidParallelismError):
    """A per-environment ``par`` dict has no entry for the chosen environment."""


class ReservedNameError(PlanningError):
    """A component or stream name that starts with ``__`` (kept for the system)."""


class InvalidConfigError(PlanningError):
    """A configuration that is not a JSON object of JSON values."""


class InvalidComponentError(PlanningError):
    """A component definition the engines cannot use (bad kind, no implementation)."""


class UnsupportedComponentError(PlanningError):
    """A component kind the engines cannot run (Java components)."""


class MalformedPlanError(PlanningError):
    """Serialized plan bytes or a protobuf plan that cannot be read back."""


# -- finding the topology ---------------------------------------------------------


class TopologyLoadError(PlanningError):
    """A topology file could not be turned into a Topology class."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class TopologyFileNotFoundError(TopologyLoadError):
    """The topology file does not exist."""


class TopologyImportError(TopologyLoadError):
    """Importing the topology file raised; the message has the file:line of the error."""


class NoTopologyClassError(TopologyLoadError):
    """The topology file defines no Topology subclass."""
