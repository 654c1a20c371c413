"""heronpy's ``Spout``: override ``initialize``, ``next_tuple``, ``ack``, ``fail``."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from heronpy.api.spout.base_spout import BaseSpout


class Spout(BaseSpout):
    """A heronpy spout; do not override ``__init__`` (it receives the delegate)."""

    @abstractmethod
    def initialize(self, config: dict[str, Any], context: Any) -> None:
        """Called once before the first ``next_tuple``, with the auto-typed config and a
        ``TopologyContext``."""

    @abstractmethod
    def close(self) -> None:
        """Called when this spout is going to be shut down (not guaranteed)."""

    @abstractmethod
    def next_tuple(self) -> None:
        """Emit tuples; must not block."""
        raise NotImplementedError("Spout not implementing next_tuple() method")

    @abstractmethod
    def ack(self, tup_id: Any) -> None:
        """The tuple tree emitted with ``tup_id`` was fully processed."""

    @abstractmethod
    def fail(self, tup_id: Any) -> None:
        """The tuple tree emitted with ``tup_id`` failed or timed out."""

    @abstractmethod
    def activate(self) -> None:
        """Called when the topology is activated."""

    @abstractmethod
    def deactivate(self) -> None:
        """Called when the topology is deactivated; next_tuple is not called meanwhile."""
