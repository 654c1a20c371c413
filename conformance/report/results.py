"""``results.json``: the whole suite result as JSON, written atomically, read back into
the model. The HTML page and the JUnit XML are rendered from this file alone."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from conformance.model import SuiteResult

__all__ = ["atomic_write_text", "json_safe", "read_results", "write_results"]

RESULTS_FORMAT = 1


class ResultsFileError(ValueError):
    """A ``results.json`` that cannot be read (names the file and what is wrong)."""


def atomic_write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` so a reader sees the old file or the new one, never half
    of one (a temporary file in the same directory, fsynced, then renamed over)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def json_safe(value: Any) -> Any:
    """``value`` with what strict JSON cannot hold made representable: non-finite floats
    become strings, tuples and sets lists, other objects their ``repr``."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((json_safe(v) for v in value), key=repr)
    if hasattr(value, "value") and isinstance(value.value, str):  # enums
        return value.value
    return repr(value)


def results_text(suite: SuiteResult) -> str:
    return json.dumps(json_safe(suite.to_json()), indent=2, ensure_ascii=False,
                      allow_nan=False) + "\n"


def write_results(suite: SuiteResult, path: Path) -> Path:
    """Write ``suite`` as ``results.json`` at ``path`` (atomically)."""
    return atomic_write_text(Path(path), results_text(suite))


def read_results(path: Path) -> SuiteResult:
    """The suite result a ``results.json`` holds."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsFileError(f"{path}: no such results file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsFileError(f"{path}: not a JSON results file: {exc}") from None
    if not isinstance(data, dict) or "cases" not in data:
        raise ResultsFileError(f"{path}: not a conformance results file (no 'cases')")
    fmt = data.get("format", RESULTS_FORMAT)
    if fmt != RESULTS_FORMAT:
        raise ResultsFileError(f"{path}: results format {fmt!r}; this version reads "
                               f"format {RESULTS_FORMAT}")
    try:
        return SuiteResult.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultsFileError(f"{path}: malformed results: {type(exc).__name__}: "
                               f"{exc}") from None
