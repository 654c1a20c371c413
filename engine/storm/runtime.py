"""Shared wiring of one running topology: task queues, routes, serializer, acker links.

Executors and collectors talk to each other only through this object, so each of
them stays a small piece with one job.
"""

from __future__ import annotations

import queue
import random
import threading
from collections.abc import Callable
from typing import Any

from engine.common.runtime.capture import OutputCapture
from engine.config.reliability import Reliability
from engine.storm.routing import StreamRoute

#: Kinds of item on a bolt executor's queue.
TUPLE = 0
TICK = 1
POLL = 2  # a shell bolt's subprocess sent something: poll its host
#: the checkpointer asks the executor to stop until released:
#: (PARK, PARK_SLOT, parked event, release event)
PARK = 3
PARK_SLOT = -2


class Runtime:
    def __init__(self, *, plan: Any, conf: dict[str, Any], serializer: Any,
                 reliability: Reliability, routes: dict[str, dict[str, StreamRoute]],
                 capture: OutputCapture, rng: random.Random) -> None:
        self.plan = plan
        self.conf = conf
        self.serializer = serializer
        self.reliability = reliability
        self.routes = routes
        self.capture = capture
        self.rng = rng
        self.stopping = threading.Event()
        #: task id -> the input queue of the executor running it (bolts and ackers)
        self.task_queues: dict[int, queue.Queue] = {}
        #: task id -> its Storm context (a custom grouping is prepared with its emitter's)
        self.task_contexts: dict[int, dict] = {}
        #: spout task id -> callable taking ("ack"|"fail", root) from the acker
        self.spout_inboxes: dict[int, Callable[[tuple], None]] = {}
        self.acker_tasks: list[int] = []
        self.metrics: dict[tuple[str, int], dict[str, Any]] = {}
        #: EFFECTIVELY_ONCE only: the Checkpointer (engine.storm.checkpoint); None otherwise
        self.checkpointer: Any = None
        #: held by the tick thread while it queues ticks; the checkpointer holds it to
        #: stop ticks (``ticks_paused``) with no tick half-queued
        self.tick_lock = threading.Lock()
        self.ticks_paused = False

    def put(self, task: int, item: tuple) -> None:
        """Blocking put that gives up only when the run is stopping (so stop never hangs)."""
        q = self.task_queues[task]
        while True:
            try:
                q.put(item, timeout=0.1)
                return
            except queue.Full:
                if self.stopping.is_set():
                    return

    def deliver(self, task: int, source: str, stream: str, source_task: int,
                payload: bytes, edge: int, roots: tuple[int, ...]) -> None:
        q = self.task_queues[task]
        item = (TUPLE, task, source, stream, source_task, payload, edge, roots)
        try:
            q.put_nowait(item)
        except queue.Full:
            self.put(task, item)

    def acker_send(self, root: int, message: tuple) -> None:
        self.put(self.acker_tasks[root % len(self.acker_tasks)], message)

    def idle(self) -> bool:
        """True when no tuple, tick or ack message is queued or being processed."""
        return all(q.unfinished_tasks == 0 for q in self.task_queues.values())
