"""The one capture format: every tuple a run emitted, one JSON object per line.

Each line is a record with the fields of :data:`conformance.model.CAPTURE_FIELDS`, in
that order: provenance (``engine``, ``case``, ``run_id``), where the tuple came from
(``component``, ``stream``, ``task``) and its ``values`` as a consumer saw them (after
the tuple serializer's round trip). Both engines write through :class:`CaptureWriter`:
the ``storm`` engine calls it from its emitting threads, the ``heron`` engine when the
run's per-instance capture files are merged; the expected rows of a case are written the
same way (engine ``expected``), so every side of every comparison is one file format.

JSON has no spelling for some values a tuple can carry; they are written so that the
differ's canonical form (:mod:`conformance.canonical`) reads them back as it would have
canonicalised the originals: bytes as ``{"$bytes": hex}``, sets as sorted lists, tuples
as lists, anything else as ``{"$repr": repr(value)}``. NaN and the infinities use
Python's JSON extension (``NaN``, ``Infinity``), which :func:`read_capture` accepts.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from conformance.canonical import canonical_value
from conformance.model import CAPTURE_FIELDS

__all__ = ["CaptureFormatError", "CaptureWriter", "read_capture", "write_records"]


class CaptureFormatError(ValueError):
    """A capture file holds a line that is not a capture record (names file and line)."""


def _encode(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": bytes(value).hex()}
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=lambda v: json.dumps(v, sort_keys=True, default=_encode))
    return {"$repr": repr(value)}


class CaptureWriter:
    """Writes capture records of one run of one case on one engine to a JSON-lines file.

    Safe to call from several threads (the ``storm`` engine's emitting tasks). Implements
    the engines' ``CaptureSink`` protocol (``write`` and ``close``).
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

    def write(self, component: str, stream: str, task: int | None, values: Any) -> None:
        """Record one tuple ``component`` task ``task`` emitted on ``stream``."""
        record = {"engine": self.engine, "case": self.case, "run_id": self.run_id,
                  "component": component, "stream": stream, "task": task,
                  "values": list(values)}
        try:
            line = json.dumps(record, default=_encode, ensure_ascii=False)
        except (TypeError, ValueError):
            # dict keys JSON cannot spell (tuples, bytes): write the canonical form the
            # differ would compare anyway
            record["values"] = [canonical_value(v) for v in record["values"]]
            line = json.dumps(record, default=_encode, ensure_ascii=False)
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
    ``task``) as one capture file with the given provenance; returns how many."""
    with CaptureWriter(path, engine=engine, case=case, run_id=run_id) as writer:
        for record in records:
            writer.write(record["component"], record["stream"], record.get("task"),
                         record["values"])
        return writer.count


def read_capture(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a capture file, in file order; a malformed line raises
    :class:`CaptureFormatError` naming ``path:line``."""
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
                record = json.loads(line)
            except ValueError as exc:
                raise CaptureFormatError(f"{path}:{number}: not JSON: {exc}") from None
            if not isinstance(record, dict):
                raise CaptureFormatError(f"{path}:{number}: a capture record is a JSON object, "
                                         f"got {type(record).__name__}")
            missing = [f for f in CAPTURE_FIELDS if f not in record]
            if missing:
                raise CaptureFormatError(f"{path}:{number}: capture record lacks "
                                         f"{', '.join(missing)}")
            if not isinstance(record["values"], list):
                raise CaptureFormatError(f"{path}:{number}: 'values' must be a list, got "
                                         f"{type(record['values']).__name__}")
            yield record
