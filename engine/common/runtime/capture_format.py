"""The capture line format: one captured tuple as one line of JSON, and the file it goes in.

Both engines write it (the ``storm`` engine through ``conformance.capture.TaskCaptures``,
each ``heron`` instance process through :func:`open_task_file` and :func:`capture_line`);
the conformance suite reads it (``conformance.capture.read_capture``). A line is a JSON
object with the fields of :data:`CAPTURE_FIELDS`, in that order, plus ``msg_id`` when the
tuple had a spout's message id. A task writes a file of its own,
``<component>_<task>.jsonl`` (``.1.jsonl``, ``.2.jsonl``... when its process was started
again), claimed with ``O_EXCL`` and never appended to.

Values are written losslessly typed by :func:`encode`: plain JSON keeps ``int`` and
``float`` apart (``1`` against ``1.0``) but has no tuple, set, bytes, non-string dict key
or non-finite float, so those are written as one-key objects whose key starts with ``$``:

=======================  ==========================================
value                    written as
=======================  ==========================================
``(1, "a")``             ``{"$tuple": [1, "a"]}``
``{1, 2}``               ``{"$set": [1, 2]}`` (``$frozenset`` for frozensets)
``b"\\x00\\xff"``           ``{"$bytes": "00ff"}``
``float("nan")``         ``{"$float": "nan"}`` (also ``inf``, ``-inf``)
``{(1, 2): "x"}``        ``{"$map": [[{"$tuple": [1, 2]}, "x"]]}``
``{"$x": 1}``            ``{"$map": [["$x", 1]]}`` (so a user's ``$`` key is never a tag)
anything else            ``{"$repr": "<repr>"}`` (read back as that object, not the value)
=======================  ==========================================

Everything else (``None``, booleans, ints, finite floats, strings, lists, dicts with string
keys) is plain JSON, so a capture line is strict JSON that any reader (``jq``, Spark's
text reader) accepts. Reading (``conformance.typed_json.decode``, the exact inverse for
every type in the table but the last) belongs to the suite.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

__all__ = ["CAPTURE_FIELDS", "CAPTURE_SUFFIX", "CaptureFormatError", "capture_line", "encode",
           "open_task_file", "task_file_stem"]

#: one captured tuple, as the engines write it (one JSON object per line)
CAPTURE_FIELDS = ("engine", "case", "run_id", "component", "stream", "task", "values")
#: the ending of capture files; a capture directory's files are those ending so
CAPTURE_SUFFIX = ".jsonl"

_PLAIN = (str, int, type(None))  # bool is an int


class CaptureFormatError(ValueError):
    """A capture file holds a line that is not a capture record (names file and line)."""


def encode(value: Any) -> Any:
    """``value`` as JSON-serialisable data from which ``conformance.typed_json.decode``
    rebuilds it."""
    kind = type(value)
    if kind in _PLAIN or kind is bool:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if kind is list:
        return [encode(v) for v in value]
    if kind is tuple:
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, Mapping):
        if all(type(k) is str for k in value) and not (
                len(value) == 1 and next(iter(value)).startswith("$")):
            return {k: encode(v) for k, v in value.items()}
        return {"$map": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": bytes(value).hex()}
    if isinstance(value, frozenset):
        return {"$frozenset": [encode(v) for v in value]}
    if isinstance(value, set):
        return {"$set": [encode(v) for v in value]}
    if isinstance(value, (str, int, float, list, tuple)):  # subclasses: as their base
        bases: tuple[type, ...] = (bool, str, int, float, list, tuple)
        for base in bases:
            if isinstance(value, base):
                return encode(base(value))
    return {"$repr": repr(value)}


def capture_line(engine: str, case: str, run_id: str, component: str, stream: str,
                 task: int | None, values: Any, message_id: Any = None) -> str:
    """One capture record as its line (no newline): compact, strict JSON, typed values."""
    record = {"engine": engine, "case": case, "run_id": run_id, "component": component,
              "stream": stream, "task": task, "values": encode(list(values))}
    if message_id is not None:
        record["msg_id"] = encode(message_id)
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def task_file_stem(component: str, task: int | None) -> str:
    """``<component>_<task>`` with anything but letters, digits, ``.``, ``-`` and ``_``
    replaced, so a user's component name never makes a path (the records inside keep the
    real names)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", str(component)).lstrip(".") or "component"
    return f"{safe}_{task if task is not None else 'x'}"


def open_task_file(directory: Path, component: str, task: int | None,
                   buffering: int = -1) -> tuple[Path, IO[str]]:
    """A new capture file of one task in ``directory``, open for writing:
    ``<component>_<task>.jsonl``, or ``<component>_<task>.<n>.jsonl`` (n = 1, 2, ...)
    when that exists already (the task's process was started again after a kill). The
    name is claimed with ``O_EXCL``: an existing file, perhaps ending in a cut-short line,
    is never appended to."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stem = task_file_stem(component, task)
    for n in range(10_000):
        path = directory / (f"{stem}{CAPTURE_SUFFIX}" if n == 0
                            else f"{stem}.{n}{CAPTURE_SUFFIX}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        return path, os.fdopen(fd, "w", encoding="utf-8", buffering=buffering)
    raise CaptureFormatError(f"{directory}: 10000 capture files of {component} task {task} "
                             "already: the task restarted without end?")
