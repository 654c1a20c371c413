"""Spouts: ``Spout`` and ``ReliableSpout`` with pystorm's behaviour."""
from __future__ import annotations

from collections import Counter
from typing import Any

from .component import Component, not_a_tuple
from .dsl import spec_for_spout
from .dsl.component import PythonSpoutSpec

__all__ = ["Spout", "ReliableSpout"]


class Spout(Component):
    """Base class for spouts.

    Storm drives a spout with one command at a time (``next``, ``ack``,
    ``fail``, ``activate``, ``deactivate``); each is answered by the hook's
    emits and then a ``sync``.  ``next_tuple`` must not block.
    """

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        par: int | dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> PythonSpoutSpec:
        """Declare this spout in a ``Topology`` (outputs come from ``cls.outputs``)."""
        return spec_for_spout(cls, name=name, par=par, config=config)

    def _bind(
        self, storm_conf: dict[str, Any], context: dict[str, Any], collector: Any, logger: Any
    ) -> None:
        super()._bind(storm_conf, context, collector, logger)
        # An engine's collector may offer this method's work and its own in one call
        # (``spout_emit``, see OutputCollector): only a class that keeps this ``emit``
        # gets it, so a subclass's own ``emit`` always runs.
        if type(self).emit is Spout.emit:
            spout_emit = getattr(collector, "spout_emit", None)
            if spout_emit is not None:
                # per instance, on purpose: the fused call stands in for this method
                self.emit = spout_emit  # type: ignore[method-assign]

    def ack(self, tup_id: Any) -> None:
        """Called when the tuple emitted with ``tup_id`` was fully processed."""

    def fail(self, tup_id: Any) -> None:
        """Called when the tuple emitted with ``tup_id`` failed or timed out.

        Replay is the spout's decision; the default drops the tuple.
        """

    def next_tuple(self) -> None:
        """Emit zero or more tuples; called whenever Storm wants more."""
        raise NotImplementedError()

    def activate(self) -> None:
        """Called when the topology is activated (Storm >= 1.1)."""

    def deactivate(self) -> None:
        """Called when the topology is deactivated (Storm >= 1.1)."""

    def is_exhausted(self) -> bool:
        """Whether this spout will never emit again (our extension).

        Mirrors Storm's ``CompletableSpout.isExhausted``: a finite source
        returns True once drained so a bounded run (tests, conformance) can
        end.  pystorm has no such hook; the default, False, keeps a spout
        running forever as it would under Storm.
        """
        return False

    # pystorm's signature: a spout's emit takes no anchors (Component.emit does)
    def emit(  # type: ignore[override]
        self, tup: list[Any] | tuple[Any, ...], tup_id: Any = None, stream: str | None = None,
        direct_task: int | None = None, need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit a tuple; without ``tup_id`` it is unreliable (no ack/fail)."""
        # Component.emit's work, inlined: a spout calls this once per tuple.
        if not isinstance(tup, (list, tuple)):
            raise not_a_tuple(tup)
        task_ids = self._collector.emit(tup, stream, None, direct_task, need_task_ids, tup_id)
        if not need_task_ids:
            return None
        return [direct_task] if direct_task is not None else task_ids

    def _run(self) -> None:
        cmd = self.read_command()
        command = cmd["command"]
        if command == "next":
            self.next_tuple()
        elif command == "ack":
            self.ack(cmd["id"])
        elif command == "fail":
            self.fail(cmd["id"])
        elif command == "activate":
            self.activate()
        elif command == "deactivate":
            self.deactivate()
        else:
            assert self.logger is not None  # run() set it up before reading commands
            self.logger.error("Received invalid command from Storm: %r", cmd)
        self._collector.sync()


class ReliableSpout(Spout):
    """Spout that replays a failed tuple up to ``max_fails`` times.

    Every emit needs a ``tup_id``.  After ``max_fails`` replays the tuple is
    acked, i.e. dropped silently, as pystorm does.
    """

    max_fails = 3

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.failed_tuples: Counter[Any] = Counter()
        self.unacked_tuples: dict[Any, tuple[Any, ...]] = {}

    def ack(self, tup_id: Any) -> None:
        """Forget the tuple; an unknown id is logged."""
        self.failed_tuples.pop(tup_id, None)
        try:
            del self.unacked_tuples[tup_id]
        except KeyError:
            assert self.logger is not None  # acks come once run() or _bind set it
            self.logger.error("Received ack for unknown tuple ID: %r", tup_id)

    def fail(self, tup_id: Any) -> None:
        """Re-emit the stored tuple, or give up after ``max_fails``."""
        saved_args = self.unacked_tuples.get(tup_id)
        if saved_args is None:
            assert self.logger is not None  # fails come once run() or _bind set it
            self.logger.error("Received fail for unknown tuple ID: %r", tup_id)
            return
        tup, stream, direct_task, need_task_ids = saved_args
        if self.failed_tuples[tup_id] < self.max_fails:
            self.emit(
                tup,
                tup_id=tup_id,
                stream=stream,
                direct_task=direct_task,
                need_task_ids=need_task_ids,
            )
            self.failed_tuples[tup_id] += 1
        else:
            assert self.logger is not None  # fails come once run() or _bind set it
            self.logger.info(
                "Acking tuple ID %r after it exceeded retry limit (%r)", tup_id, self.max_fails
            )
            self.ack(tup_id)

    # Spout.emit's signature (pystorm's), which Component.emit's does not cover
    def emit(  # type: ignore[override]
        self, tup: list[Any] | tuple[Any, ...], tup_id: Any = None, stream: str | None = None,
        direct_task: int | None = None, need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit and remember the tuple so a fail can replay it."""
        if tup_id is None:
            raise ValueError(
                "You must provide a tuple ID when emitting with a ReliableSpout in order for the "
                "tuple to be tracked."
            )
        self.unacked_tuples[tup_id] = (tup, stream, direct_task, need_task_ids)
        return super().emit(tup, tup_id=tup_id, stream=stream, direct_task=direct_task,
                            need_task_ids=need_task_ids)
