"""heronpy's ``Bolt``: override ``initialize``, ``process`` and ``process_tick``."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from compat.storm_api.tuple import Tuple
from heronpy.api.bolt.base_bolt import BaseBolt


class Bolt(BaseBolt):
    """A heronpy bolt; do not override ``__init__`` (it receives the delegate)."""

    @abstractmethod
    def initialize(self, config: dict[str, Any], context: Any) -> None:
        """Called once before the first tuple, with the auto-typed config and a
        ``TopologyContext``; setting ``topology.tick.tuple.freq.secs`` in ``config``
        here sets this bolt's tick frequency."""

    @abstractmethod
    def process(self, tup: Tuple) -> None:
        """Process one input tuple (not ticks: those go to ``process_tick``)."""
        raise NotImplementedError("Bolt not implementing process() method.")

    @abstractmethod
    def process_tick(self, tup: Tuple) -> None:
        """Handle a tick tuple (``topology.tick.tuple.freq.secs``); the default ignores it."""
