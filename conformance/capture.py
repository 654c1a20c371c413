"""The one capture format: every tuple a run emitted, one JSON object per line.

Each line is a record with the fields of :data:`conformance.model.CAPTURE_FIELDS`, in
that order: provenance (``engine``, ``case``, ``run_id``), where the tuple came from
(``component``, ``stream``, ``task``) and its ``values`` as a consumer saw them (after
the tuple serializer's round trip), plus ``msg_id`` when the tuple had one. Both engines
write through :class:`CaptureWriter`: the ``storm`` engine calls it from its emitting
threads, the ``heron`` engine while it streams its tasks' capture files into one; the
expected rows of a case are written the same way (engine ``expected``), so every side of
every comparison is one file format.

Why JSON lines (and not Parquet): a capture is written while the run goes, by a process
that can be killed at any moment (``--inject-failures``). Written line by line, a file is
always readable: a killed writer leaves at most one cut-short last line, which readers
drop (:func:`read_capture` here, the Spark differ on its executors) and report. Parquet
would need each chunk written to a temporary name and renamed, a footer per file and
pyarrow in every engine process. Plain uncompressed text is also splittable: Spark reads
one large capture in many parallel partitions without a driver ever holding it.

Values are written losslessly typed (:mod:`conformance.typed_json`): ``1`` and ``1.0``,
tuples and lists, bytes and strings stay distinct. :func:`read_capture` gives the plain
JSON view people read (tuples as lists, bytes as ``{"$bytes": hex}``) or, with
``typed=True``, the values themselves.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from conformance.model import CAPTURE_FIELDS
from conformance.typed_json import decode, encode, json_view

__all__ = ["CaptureFormatError", "CaptureWriter", "capture_line", "parse_line",
           "read_capture", "write_records"]


class CaptureFormatError(ValueError):
    """A capture file holds a line that is not a capture record (names file and line)."""


def capture_line(engine: str, case: str, run_id: str, component: str, stream: str,
                 task: int | None, values: Any, message_id: Any = None) -> str:
    """One capture record as its line (no newline): compact, strict JSON, typed values."""
    record = {"engine": engine, "case": case, "run_id": run_id, "component": component,
              "stream": stream, "task": task, "values": encode(list(values))}
    if message_id is not None:
        record["msg_id"] = encode(message_id)
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def parse_line(line: str) -> dict[str, Any]:
    """A capture line as its record with decoded (typed) values; ``ValueError`` (with what
    is wrong, no file name) when the line is not a capture record."""
    try:
        record = json.loads(line)
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise ValueError(f"a capture record is a JSON object, got {type(record).__name__}")
    missing = [f for f in CAPTURE_FIELDS if f not in record]
    if missing:
        raise ValueError(f"capture record lacks {', '.join(missing)}")
    values = decode(record["values"])
    if not isinstance(values, list):
        raise ValueError(f"'values' must be a list, got {type(values).__name__}")
    record["values"] = values
    if "msg_id" in record:
        record["msg_id"] = decode(record["msg_id"])
    return record


class CaptureWriter:
    """Writes capture records of one run of one case on one engine to a JSON-lines file.

    Safe to call from several threads (the ``storm`` engine's emitting tasks). Implements
    the engines' ``CaptureSink`` protocol (``write`` and ``close``). Lines are written
    whole, in order; a killed process leaves at most its last line cut short.
    """

    def __init__(self, path: Path, *, engine: str, case: str, run_id: str) -> None:
        self.path = Path(path)
        self.engine = engine
        self.case = case
        self.run_id = run_id
        self.count = 0
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = open(self.path, "w", encoding="utf-8")

    def write(self, component: str, stream: str, task: int | None, values: Any,
              message_id: Any = None) -> None:
        """Record one tuple ``component`` task ``task`` emitted on ``stream``."""
        line = capture_line(self.engine, self.case, self.run_id, component, stream, task,
                            values, message_id)
        with self._lock:
            if self._fh is None:
                raise ValueError(f"capture {self.path} is closed; {component}/{stream} "
                                 f"task {task} emitted after the run ended")
            self._fh.write(line + "\n")
            self.count += 1

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def __enter__(self) -> CaptureWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_records(path: Path, records: Iterable[Mapping[str, Any]], *, engine: str,
                  case: str, run_id: str) -> int:
    """Write ``records`` (dicts with ``component``, ``stream``, ``values`` and optionally
    ``task`` and ``msg_id``) as one capture file with the given provenance; returns how
    many. ``records`` is consumed as it is iterated (it can be a stream)."""
    with CaptureWriter(path, engine=engine, case=case, run_id=run_id) as writer:
        for record in records:
            writer.write(record["component"], record["stream"], record.get("task"),
                         record["values"], record.get("msg_id"))
        return writer.count


def read_capture(path: Path, *, typed: bool = False) -> Iterator[dict[str, Any]]:
    """The records of a capture file, in file order, one at a time.

    By default each record has exactly the fields of ``CAPTURE_FIELDS`` with ``values``
    in their plain JSON view; ``typed=True`` gives the decoded values (tuples, bytes,
    sets as they were) and ``msg_id`` where there is one. A last line without its newline
    that does not parse was cut short by a killed writer and is skipped; any other bad
    line raises :class:`CaptureFormatError` naming ``path:line``."""
    path = Path(path)
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise CaptureFormatError(f"{path}: cannot read the capture: {exc.strerror}") from None
    with fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = parse_line(line)
            except ValueError as exc:
                if not line.endswith("\n"):
                    return  # the writer was killed mid-line: the record never was
                raise CaptureFormatError(f"{path}:{number}: {exc}") from None
            if typed:
                yield record
            else:
                yield {**{f: record[f] for f in CAPTURE_FIELDS},
                       "values": json_view(record["values"])}


def capture_size(paths: Iterable[Path]) -> int:
    """The bytes of the given capture files (missing files count 0)."""
    total = 0
    for path in paths:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    return total
