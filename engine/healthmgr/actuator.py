"""How an action reaches the topology: the :class:`Actuator` the engine implements.

The engine's implementation goes through the same path as ``heron update`` (scale) and
``heron restart --container`` (restart), so an action never loses data: at-least-once
topologies replay what a restart cuts. Calls return once the change was accepted (the
update may still be running; the loop then sees ``TopologyView.updating``) and raise
when it was refused; the exception's text is recorded with the action."""

from __future__ import annotations

from typing import Protocol


class Actuator(Protocol):
    def scale(self, component: str, parallelism: int) -> None:
        """Set ``component``'s parallelism to ``parallelism`` (``heron update
        --component-parallelism component:parallelism``)."""
        ...

    def restart_container(self, container: int) -> None:
        """Restart every process of container ``container`` (its instances get new pids)."""
        ...
