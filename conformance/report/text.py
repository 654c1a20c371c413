"""Text for reports: a diff's inputs in one line (:func:`describe_inputs`), and hygiene:
engine and Spark messages carry ANSI colour codes and sometimes control characters;
neither belongs in HTML or XML."""

from __future__ import annotations

import json
import re
from typing import Any

from conformance.model import DiffResult

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
#: characters XML 1.0 cannot hold (tab, newline and carriage return are fine)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def clean_text(value: Any) -> str:
    """``value`` as display text: ANSI escapes removed, control characters shown as
    ``\\xNN`` (so nothing is silently lost)."""
    text = value if isinstance(value, str) else str(value)
    text = _ANSI.sub("", text)
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def value_text(value: Any) -> str:
    """One canonical value as compact JSON text (strings quoted, so ``"1"`` and ``1``
    read differently)."""
    return clean_text(json.dumps(value, ensure_ascii=False, separators=(", ", ": "),
                                 sort_keys=True, default=repr))


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)


def describe_inputs(diff: DiffResult) -> str:
    """One line: each side's rows (and files and bytes, when read from files) and the
    Spark job's time."""
    parts = []
    for side, facts in diff.inputs.items():
        bits = [f"{facts.get('rows', 0):,} rows"]
        if facts.get("files"):
            bits.append(f"{facts['files']} file(s)")
        if facts.get("bytes") is not None:
            bits.append(_size(int(facts["bytes"])))
        parts.append(f"{side}: {', '.join(bits)}")
    if diff.spark_seconds is not None:
        parts.append(f"Spark job {diff.spark_seconds:.2f} s")
    return "; ".join(parts)
