"""The one capture format: every tuple a run emitted, one JSON object per line.

The line format, its typed values and the one-file-per-task rule are the engines'
(:mod:`engine.common.runtime.capture_format`, re-exported here); this module writes whole captures
and reads them back. Each line is a record with the fields of ``CAPTURE_FIELDS``, in
that order: provenance (``engine``, ``case``, ``run_id``), where the tuple came from
(``component``, ``stream``, ``task``) and its ``values`` as a consumer saw them (after
the tuple serializer's round trip), plus ``msg_id`` when the tuple had one (a spout's
message id, on the rows the spout emitted with it). Every side of every comparison is one
file format: an engine's run writes a *capture directory* holding one file per task
(:class:`TaskCaptures` in the ``storm`` engine's process, each ``heron`` instance process
its own through :func:`open_task_file`), and the expected rows of a case are one file
(engine ``expected``). A diff reads a directory as its ``*.jsonl`` files
(:func:`capture_files`), each in parallel.

Why a file per task: no process ever funnels (or holds) a whole capture, each file is
written by one process only, and a task killed mid-run (``--inject-failures``) damages its
own file at most, by one cut-short last line. A task's process started again after a kill
writes a new file (:func:`open_task_file` never reopens one), so that cut-short line stays
last in its file and the reader's rule below still holds.

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

from conformance.typed_json import decode, json_view
from engine.common.runtime.capture_format import (
    CAPTURE_FIELDS,
    CAPTURE_SUFFIX,
    CaptureFormatError,
    capture_line,
    open_task_file,
    task_file_stem,
)

__all__ = ["CAPTURE_SUFFIX", "CaptureFormatError", "CaptureWriter", "TaskCaptures",
           "capture_files", "capture_line", "ends_cut_short", "first_unreadable_line",
           "open_task_file", "parse_line", "read_capture",
           "task_file_stem", "write_records"]


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
    ``task_of`` (component and task) makes it a task's own file in directory ``path``
    (:func:`open_task_file`); otherwise ``path`` is the file, replaced if it exists.
    """

    def __init__(self, path: Path, *, engine: str, case: str, run_id: str,
                 task_of: tuple[str, int | None] | None = None) -> None:
        self.engine = engine
        self.case = case
        self.run_id = run_id
        self.count = 0
        self._lock = threading.Lock()
        self._fh: IO[str] | None
        if task_of is not None:
            self.path, self._fh = open_task_file(Path(path), *task_of)
        else:
            self.path = Path(path)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "w", encoding="utf-8")

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


class TaskCaptures:
    """A capture directory written by one process: one :class:`CaptureWriter` (one file)
    per task, opened on the task's first tuple. The ``storm`` engine's sink: its tasks are
    threads of one process, and each still gets a file of its own, as a ``heron``
    instance process does. Safe to call from several threads."""

    def __init__(self, directory: Path, *, engine: str, case: str, run_id: str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.engine = engine
        self.case = case
        self.run_id = run_id
        self._writers: dict[tuple[str, int | None], CaptureWriter] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def count(self) -> int:
        """Records written so far, over every task."""
        return sum(w.count for w in list(self._writers.values()))

    @property
    def files(self) -> list[Path]:
        return sorted(w.path for w in self._writers.values())

    def write(self, component: str, stream: str, task: int | None, values: Any,
              message_id: Any = None) -> None:
        """Record one tuple ``component`` task ``task`` emitted on ``stream``."""
        writer = self._writers.get((component, task))
        if writer is None:
            with self._lock:
                if self._closed:
                    raise ValueError(f"capture {self.directory} is closed; {component}/"
                                     f"{stream} task {task} emitted after the run ended")
                writer = self._writers.get((component, task))
                if writer is None:
                    writer = CaptureWriter(self.directory, engine=self.engine,
                                           case=self.case, run_id=self.run_id,
                                           task_of=(component, task))
                    self._writers[(component, task)] = writer
        writer.write(component, stream, task, values, message_id)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for writer in self._writers.values():
                writer.close()

    def __enter__(self) -> TaskCaptures:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def capture_files(source: Path | str) -> list[Path]:
    """The capture files ``source`` names: a file is itself; a directory (an engine run's
    capture, one file per task) its ``*.jsonl`` files, sorted; a name with ``*``, ``?``
    or ``[`` the files that glob matches. Names only: nothing is read."""
    text = str(source)
    path = Path(source)
    if path.is_dir():
        return sorted(p for p in path.glob(f"*{CAPTURE_SUFFIX}") if p.is_file())
    if not path.exists() and any(c in text for c in "*?["):
        anchor = Path(text).anchor or "."
        pattern = os.path.relpath(text, anchor) if Path(text).is_absolute() else text
        return sorted(p for p in Path(anchor).glob(pattern) if p.is_file())
    return [path]


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
    """The records of a capture file, in file order, one at a time; of a capture
    directory (or glob), those of each of its files (:func:`capture_files`) in turn.

    By default each record has exactly the fields of ``CAPTURE_FIELDS`` with ``values``
    in their plain JSON view; ``typed=True`` gives the decoded values (tuples, bytes,
    sets as they were) and ``msg_id`` where there is one. A last line without its newline
    that does not parse was cut short by a killed writer and is skipped; any other bad
    line raises :class:`CaptureFormatError` naming ``path:line``."""
    files = capture_files(path)
    if files != [Path(path)]:
        for file in files:
            yield from read_capture(file, typed=typed)
        return
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


def ends_cut_short(path: Path) -> bool:
    """Whether the file's last line is what a writer killed mid-line leaves: no newline
    after it and not a capture record (read from the end: a capture can be large)."""
    with open(path, "rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        if end == 0:
            return False
        fh.seek(end - 1)
        if fh.read(1) == b"\n":
            return False
        tail, position = b"", end
        while position > 0 and b"\n" not in tail:
            step = min(65536, position)
            position -= step
            fh.seek(position)
            tail = fh.read(step) + tail
    last = tail.rsplit(b"\n", 1)[-1].decode("utf-8", errors="replace")
    try:
        parse_line(last)
    except ValueError:
        return True
    return False


def first_unreadable_line(path: Path) -> CaptureFormatError | None:
    """The error naming ``path:line`` of the first line that is not a capture record
    and not a cut-short last line; None when there is none."""
    try:
        for _ in read_capture(path):
            pass
    except CaptureFormatError as exc:
        return exc
    return None


def capture_size(paths: Iterable[Path]) -> int:
    """The bytes of the given capture files (missing files count 0)."""
    total = 0
    for path in paths:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    return total
