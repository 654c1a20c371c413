"""What the topology produced: tuples emitted on streams nobody consumes.

`sparse run` leaves users grepping logs for results. We keep, per leaf stream, the
tuple count, the first few tuples, and, for streams shaped like running aggregates
(``key..., number``), the latest value per key, so a run can end by showing e.g. the top
word counts. Memory stays bounded: past ``max_keys`` distinct keys new keys are counted
but not kept. ``jsonl`` optionally writes every leaf tuple to a file for later diffing, and
``keep_all`` keeps them in memory (tests). ``all_streams`` captures every declared stream,
not only leaf streams, and ``sink`` receives every captured tuple with its emitting task:
the conformance suite writes its capture records through it, on both engines.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol


class CaptureSink(Protocol):
    """Where every captured tuple goes, with provenance (the conformance suite's
    ``CaptureWriter`` and ``TaskCaptures`` implement it)."""

    def write(self, component: str, stream: str, task: int, values: list[Any],
              message_id: Any = None) -> None:
        """One captured tuple; ``message_id`` is a spout's message id for it, if any."""

    def close(self) -> None: ...


@dataclass
class StreamCapture:
    component: str
    stream: str
    fields: tuple[str, ...]
    count: int = 0
    samples: list[list[Any]] = field(default_factory=list)
    latest: dict[tuple, Any] = field(default_factory=dict)
    keys_dropped: int = 0
    tuples: list[list[Any]] | None = None  # every tuple, when the capture keeps all

    def top(self, n: int = 10) -> list[tuple[tuple, Any]]:
        """The ``n`` keys with the largest latest value."""
        return sorted(self.latest.items(), key=lambda kv: (-kv[1], repr(kv[0])))[:n]


class OutputCapture:
    def __init__(self, max_samples: int = 5, max_keys: int = 100_000,
                 jsonl: Path | None = None, keep_all: bool = False,
                 all_streams: bool = False, sink: CaptureSink | None = None) -> None:
        self.streams: dict[tuple[str, str], StreamCapture] = {}
        #: capture every stream the engine declares, consumed or not
        self.all_streams = all_streams
        self.sink = sink
        self._max_samples = max_samples
        self._max_keys = max_keys
        self._lock = threading.Lock()
        self._keep_all = keep_all
        self._jsonl: IO[str] | None = open(jsonl, "w", encoding="utf-8") if jsonl else None

    def declare(self, component: str, stream: str, fields: Sequence[str]) -> StreamCapture:
        cap = StreamCapture(component, stream, tuple(fields),
                            tuples=[] if self._keep_all else None)
        self.streams[(component, stream)] = cap
        return cap

    def record(self, cap: StreamCapture, task: int, values: list[Any],
               message_id: Any = None) -> None:
        """Called from emitting task threads with values already round-tripped;
        ``message_id`` is a spout's message id for the tuple (it goes to the sink)."""
        with self._lock:
            cap.count += 1
            if cap.tuples is not None:
                cap.tuples.append(values)
            if len(cap.samples) < self._max_samples:
                cap.samples.append(values)
            if len(values) >= 2:
                last = values[-1]
                if isinstance(last, (int, float)) and not isinstance(last, bool):
                    key = tuple(_hashable(v) for v in values[:-1])
                    if key in cap.latest or len(cap.latest) < self._max_keys:
                        cap.latest[key] = last
                    else:
                        cap.keys_dropped += 1
            if self._jsonl is not None:
                self._jsonl.write(json.dumps(
                    {"component": cap.component, "stream": cap.stream, "task": task,
                     "values": values}, default=repr) + "\n")
            if self.sink is not None:
                if message_id is None:
                    self.sink.write(cap.component, cap.stream, task, values)
                else:
                    self.sink.write(cap.component, cap.stream, task, values, message_id)

    def close(self) -> None:
        if self._jsonl is not None:
            self._jsonl.close()
            self._jsonl = None
        if self.sink is not None:
            self.sink.close()
            self.sink = None


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value
