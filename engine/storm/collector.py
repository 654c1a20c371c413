"""The in-process OutputCollector of one task: emits, acks and fails go straight into the
engine instead of through Storm's multi-lang protocol.

Acking follows Storm's ShellBolt and executor logic: every input a bolt receives is
remembered under its id until acked or failed (so double acks and anchoring to finished
tuples are caught, as Storm does fatally); every copy of a tracked tuple sent to a task
gets a random 64-bit edge id; a bolt's ack sends ``edge XOR (edges of the tuples anchored
to it)`` to the acker of each root.
"""

from __future__ import annotations

import logging
from random import getrandbits
from typing import Any

from engine.common.grouping import GroupingError
from engine.common.runtime.errors import AckingError, EmitError
from engine.common.runtime.stats import TaskStats
from engine.common.serialization import SerializationError
from engine.storm.routing import task_routes
from engine.storm.runtime import Runtime

#: multi-lang log levels (0 trace .. 4 error) to Python's.
_LOG_LEVELS = {0: 5, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR}


class InputRecord:
    """An input a bolt task has received and not yet acked or failed."""

    __slots__ = ("edge", "roots", "child_xor")

    def __init__(self, edge: int, roots: tuple[int, ...]) -> None:
        self.edge = edge
        self.roots = roots
        self.child_xor = 0


class TaskCollector:
    def __init__(self, runtime: Runtime, component: str, task: int, is_spout: bool,
                 stats: TaskStats, logger: logging.Logger) -> None:
        self._rt = runtime
        self.component = component
        self.task = task
        self.is_spout = is_spout
        self.stats = stats
        self.logger = logger
        self._routes = task_routes(runtime.routes[component], runtime.task_contexts.get(task))
        self._dumps = runtime.serializer.dumps
        self._loads = runtime.serializer.loads
        self._acking = runtime.reliability.acking
        #: bolt inputs not yet acked or failed: tuple id -> InputRecord
        self.inputs: dict[Any, InputRecord] = {}
        #: spout: tracked emits of the current call, (root, msg_id, edge xor, had targets)
        self.new_roots: list[tuple[int, Any, int, bool]] = []

    # -- emits -------------------------------------------------------------------------
    def emit(self, values: list | tuple, stream: str | None, anchors: list | None,
             direct_task: int | None, need_task_ids: bool, tup_id: Any | None) -> list[int] | None:
        stream = "default" if stream is None else stream
        route = self._routes.get(stream)
        if route is None:
            raise EmitError(
                f"component {self.component!r} task {self.task} emitted to undeclared stream "
                f"{stream!r}; declared streams: {sorted(self._routes)}")
        if len(values) != len(route.fields):
            raise EmitError(
                f"component {self.component!r} task {self.task} emitted {len(values)} value(s) "
                f"on stream {stream!r}, which declares {len(route.fields)} field(s) "
                f"{list(route.fields)}: {list(values)!r}")
        if direct_task is not None and not route.direct:
            raise EmitError(
                f"component {self.component!r} task {self.task} emitted with direct_task="
                f"{direct_task} on stream {stream!r}, which is not declared direct "
                "(declare Stream(..., direct=True))")
        if route.direct and direct_task is None:
            raise EmitError(
                f"component {self.component!r} task {self.task} emitted without direct_task on "
                f"direct stream {stream!r}")
        try:
            payload = self._dumps(values)
        except Exception as exc:
            raise SerializationError(
                f"task {self.task} emitted a value the tuple serializer "
                f"({self._rt.serializer.name}) cannot encode: {exc}; values: {list(values)!r}",
                component=self.component, stream=stream, values=values) from None
        targets: list[int] = []
        try:
            for grouping in route.groupings:
                targets.extend(grouping.choose(values, direct_task))
        except GroupingError as exc:
            raise EmitError(f"component {self.component!r} task {self.task}: {exc}") from None
        self.stats.emitted += 1
        if route.capture is not None:
            self._rt.capture.record(route.capture, self.task, self._loads(payload),
                                    tup_id if self.is_spout else None)
        if self.is_spout:
            self._send_from_spout(route, payload, targets, tup_id)
        else:
            self._send_from_bolt(route, payload, targets, anchors)
        if need_task_ids:
            return targets
        return None

    def _send_from_spout(self, route: Any, payload: bytes, targets: list[int], tup_id: Any) -> None:
        deliver = self._rt.deliver
        if tup_id is None or not self._acking:
            for t in targets:
                deliver(t, self.component, route.stream, self.task, payload, 0, ())
            if tup_id is not None:
                # No ackers: Storm acks every tracked emit at once.
                self.new_roots.append((0, tup_id, 0, False))
            self.stats.transferred += len(targets)
            return
        root = getrandbits(64) or 1
        roots = (root,)
        xor = 0
        for t in targets:
            edge = getrandbits(64)
            xor ^= edge
            deliver(t, self.component, route.stream, self.task, payload, edge, roots)
        self.new_roots.append((root, tup_id, xor, bool(targets)))
        self.stats.transferred += len(targets)

    def _send_from_bolt(self, route: Any, payload: bytes, targets: list[int],
                        anchors: list | None) -> None:
        deliver = self._rt.deliver
        records: list[InputRecord] = []
        if anchors:
            inputs = self.inputs
            for anchor in anchors:
                rec = inputs.get(anchor)
                if rec is None:
                    raise AckingError(
                        f"component {self.component!r} task {self.task} anchored an emit on "
                        f"stream {route.stream!r} to tuple id {anchor!r}, which was already "
                        "acked or failed, or never received (Storm: \"Anchored onto "
                        f"{anchor} after ack/fail\"); emit before acking, or set "
                        "auto_ack = False when acking by hand")
                records.append(rec)
        roots: tuple[int, ...] = ()
        if records and self._acking:
            if len(records) == 1:
                roots = records[0].roots
            else:
                seen: dict[int, None] = {}
                for rec in records:
                    for r in rec.roots:
                        seen[r] = None
                roots = tuple(seen)
        if not roots:
            for t in targets:
                deliver(t, self.component, route.stream, self.task, payload, 0, ())
        else:
            for t in targets:
                edge = getrandbits(64)
                for rec in records:
                    rec.child_xor ^= edge
                deliver(t, self.component, route.stream, self.task, payload, edge, roots)
        self.stats.transferred += len(targets)

    # -- acking ------------------------------------------------------------------------
    def ack(self, tup_id: Any) -> None:
        rec = self.inputs.pop(tup_id, None)
        if rec is None:
            raise AckingError(
                f"component {self.component!r} task {self.task} acked tuple id {tup_id!r}, "
                "which is unknown or already acked/failed (Storm: \"Acked a non-existent or "
                "already acked/failed id\"); with auto_ack = True do not also call self.ack()")
        self.stats.acked += 1
        if rec.roots:
            value = rec.edge ^ rec.child_xor
            for root in rec.roots:
                self._rt.acker_send(root, ("ack", root, value))

    def fail(self, tup_id: Any) -> None:
        rec = self.inputs.pop(tup_id, None)
        if rec is None:
            raise AckingError(
                f"component {self.component!r} task {self.task} failed tuple id {tup_id!r}, "
                "which is unknown or already acked/failed; with auto_fail/auto_ack on do not "
                "also call self.fail()/self.ack() for the same tuple")
        self.stats.failed += 1
        for root in rec.roots:
            self._rt.acker_send(root, ("fail", root, 0))

    # -- everything else ---------------------------------------------------------------
    def log(self, msg: str, level: int) -> None:
        self.logger.log(_LOG_LEVELS.get(level, logging.INFO), msg)

    def error(self, msg: str) -> None:
        self.stats.errors += 1
        self.stats.last_error = msg.strip().splitlines()[0] if msg.strip() else msg
        self.logger.error(msg)

    def metric(self, name: str, value: Any) -> None:
        self._rt.metrics.setdefault((self.component, self.task), {})[name] = value

    def sync(self) -> None:
        pass
