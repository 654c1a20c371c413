"""``Updatable``: a component that wants to know when ``heron update`` changed the
topology's parallelism (Heron's ``IUpdatable``).

Storm has no such hook (rebalancing restarts workers). On the heron engine, instances
that keep running through an update receive the new topology context, shaped as the
``context`` given to ``initialize`` (``task->component`` etc.), e.g. to re-partition
state kept per fields-grouping key, since keys move between tasks when a consumer's
parallelism changes. Opt-in by inheritance, so an unrelated method named ``update`` is
never called by surprise.
"""

from __future__ import annotations

from typing import Any


class Updatable:
    """Mix into a Spout or Bolt: ``update(context)`` is called after each ``heron update``
    that changes any component's parallelism."""

    def update(self, context: dict[str, Any]) -> None:  # pragma: no cover - user hook
        """The topology's new context (task ids per component)."""
