"""Marker alignment for the local bolt tasks of a Stream Manager (Heron's
``CheckpointGateway``).

A task's checkpoint must reflect exactly the input its upstream tasks emitted before
their own checkpoints. Markers travel behind the data on every path, so for each local
receiving task: after the marker of checkpoint ``c`` from upstream task ``u`` arrives,
later input from ``u`` is held back; once every upstream task's marker for ``c`` has
arrived the task is told to save (in order with its input), and what was held is
released behind that.

Where Heron is weak, this is not: an alignment that does not finish within the
checkpoint timeout, or holds more than its byte bound, is abandoned for that task and
its input released at once; the checkpoint can then never complete (the Topology Master
counts it abandoned) but the topology never stalls (Heron force-drains at the bound and
has no timeout). A newer checkpoint's marker resets an older alignment; markers of an
older or abandoned checkpoint are ignored.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compat.storm_api.state import checkpoint_order

log = logging.getLogger("heron.stmgr")

#: what a task is handed, in order: ("data", item) or ("checkpoint", checkpoint id)
Delivery = tuple[str, Any]


@dataclass
class _Alignment:
    checkpoint_id: str
    started: float
    arrived: set[int] = field(default_factory=set)
    #: upstream task -> items held back, oldest first
    held: dict[int, deque] = field(default_factory=dict)
    held_bytes: int = 0


class CheckpointGateway:
    def __init__(self, upstream: Mapping[int, Iterable[int]], *, buffer_bytes: int,
                 timeout_secs: float, clock: Callable[[], float] = time.monotonic) -> None:
        #: local receiving task -> the tasks whose markers it waits for
        self.upstream = {task: frozenset(ups) for task, ups in upstream.items()}
        self.buffer_bytes = buffer_bytes
        self.timeout_secs = timeout_secs
        self._clock = clock
        self._aligning: dict[int, _Alignment] = {}
        #: task -> the newest checkpoint it was told to save or gave up on: older and
        #: equal markers are stale
        self._settled: dict[int, str] = {}
        self.abandoned = 0
        self.held_bytes = 0

    def admit(self, task: int, src: int, item: Any, size: int) -> list[Delivery]:
        """Input for ``task`` from ``src``: what to hand the task now (nothing while
        ``src``'s marker has arrived and the alignment is still open)."""
        alignment = self._aligning.get(task)
        if alignment is None or src not in alignment.arrived:
            return [("data", item)]
        alignment.held.setdefault(src, deque()).append((item, size))
        alignment.held_bytes += size
        self.held_bytes += size
        if alignment.held_bytes > self.buffer_bytes:
            log.warning("checkpoint %s abandoned for task %d: %d bytes held back while "
                        "aligning (the bound is %d)", alignment.checkpoint_id, task,
                        alignment.held_bytes, self.buffer_bytes)
            return self._abandon(task)
        return []

    def marker(self, task: int, src: int, checkpoint_id: str) -> list[Delivery]:
        """The marker of ``checkpoint_id`` from ``src`` reached ``task``'s Stream Manager."""
        ups = self.upstream.get(task)
        if ups is None or src not in ups:
            log.warning("ignored a marker for task %d from task %d, which does not feed it",
                        task, src)
            return []
        settled = self._settled.get(task)
        if settled is not None and checkpoint_order(checkpoint_id) <= checkpoint_order(settled):
            return []  # stale: that checkpoint or a newer one was saved or given up
        out: list[Delivery] = []
        alignment = self._aligning.get(task)
        if alignment is not None and alignment.checkpoint_id != checkpoint_id:
            if checkpoint_order(checkpoint_id) < checkpoint_order(alignment.checkpoint_id):
                return []  # an older checkpoint's marker: that one can no longer complete
            out.extend(self._release(task))  # a newer checkpoint overtakes this one
            alignment = None
        if alignment is None:
            alignment = self._aligning[task] = _Alignment(checkpoint_id, self._clock())
        alignment.arrived.add(src)
        if alignment.arrived >= ups:
            released = self._release(task)
            self._settled[task] = checkpoint_id
            out.append(("checkpoint", checkpoint_id))
            out.extend(released)
        return out

    def expire(self) -> dict[int, list[Delivery]]:
        """Abandon alignments open longer than the timeout: task -> what to hand it."""
        now = self._clock()
        out = {}
        for task, alignment in list(self._aligning.items()):
            if now - alignment.started > self.timeout_secs:
                log.warning("checkpoint %s abandoned for task %d: markers from %s did not "
                            "arrive within %g s", alignment.checkpoint_id, task,
                            sorted(self.upstream[task] - alignment.arrived), self.timeout_secs)
                out[task] = self._abandon(task)
        return out

    def aligning(self) -> dict[int, str]:
        """task -> the checkpoint it is aligning (for metrics and tests)."""
        return {task: a.checkpoint_id for task, a in self._aligning.items()}

    def clear(self) -> None:
        """A rollback: nothing held is delivered, every alignment is forgotten."""
        self._aligning.clear()
        self._settled.clear()
        self.held_bytes = 0

    def _abandon(self, task: int) -> list[Delivery]:
        self.abandoned += 1
        self._settled[task] = self._aligning[task].checkpoint_id
        return self._release(task)

    def _release(self, task: int) -> list[Delivery]:
        alignment = self._aligning.pop(task)
        self.held_bytes -= alignment.held_bytes
        return [("data", item) for items in alignment.held.values() for item, _ in items]
