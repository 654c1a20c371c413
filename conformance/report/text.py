"""Text hygiene for reports: engine and Spark messages carry ANSI colour codes and
sometimes control characters; neither belongs in HTML or XML."""

from __future__ import annotations

import json
import re
from typing import Any

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
