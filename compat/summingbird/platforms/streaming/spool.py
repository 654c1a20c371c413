"""Sinks and the tail's outputs under ``run_streaming``: spooled by the tasks, replayed on the
driver.

A sink is a callable in the driver's process (a ``CollectorSink`` a test reads, a file
the user opened); heron tasks are other processes. So, as the batch platform calls sinks
on the driver, ``run_streaming`` has every task that writes append ``(lineage, element)``
records to a spool file of its own (one per sink, task and process, so restarts never
share a file), flushed before the task acks its input. When the run ends the driver
reads every spool, keeps one record per lineage (a replay writes the same lineage
again, so sinks see each element once), sorts by lineage (source order, then positions:
close to the memory platform's order) and calls the real sinks.

A deployed topology has no driver: its writes call the sink where they run, and a
replay may write an element twice (at-least-once).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from . import serial

TAIL = "tail"
_LENGTH = struct.Struct(">I")


@dataclass(frozen=True)
class SpoolSink:
    """Stands in for a user's sink in a planned job run by ``run_streaming``."""

    sink_id: str

    def __call__(self, item: Any) -> None:  # pragma: no cover - components write spools directly
        raise RuntimeError(f"spooled sink {self.sink_id} called outside a streaming task")


class SpoolWriter:
    """The spool files of one task: one per sink id, opened on first write."""

    def __init__(self, directory: str | os.PathLike[str], component: str, task: int) -> None:
        self.directory = Path(directory)
        self.prefix = f"{component}.{task}.{os.getpid()}"
        self._files: dict[str, IO[bytes]] = {}

    def write(self, sink_id: str, payload: bytes) -> None:
        """Append one record: the serialized ``(lineage, element)`` of a tuple."""
        handle = self._files.get(sink_id)
        if handle is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = open(self.directory / f"{sink_id}.{self.prefix}.spool", "ab")  # noqa: SIM115
            self._files[sink_id] = handle
        handle.write(_LENGTH.pack(len(payload)) + payload)

    def flush(self) -> None:
        """Hand written records to the OS: they survive this process being killed."""
        for handle in self._files.values():
            handle.flush()

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()


def _records(path: Path) -> Iterator[bytes]:
    data = path.read_bytes()
    at = 0
    while at + _LENGTH.size <= len(data):
        (size,) = _LENGTH.unpack_from(data, at)
        end = at + _LENGTH.size + size
        if end > len(data):
            return  # a process killed mid-write: its last record is incomplete (and unacked)
        yield data[at + _LENGTH.size:end]
        at = end


def read_spool(directory: str | os.PathLike[str], sink_id: str) -> list[Any]:
    """Every element spooled for ``sink_id``, once per lineage, in lineage order."""
    found: dict[tuple[int, ...], Any] = {}
    for path in sorted(Path(directory).glob(f"{sink_id}.*.spool")):
        for payload in _records(path):
            lineage, element = serial.loads(payload)
            found.setdefault(lineage, element)
    return [found[lineage] for lineage in sorted(found)]
