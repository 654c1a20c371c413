"""Synthetic captures: many rows in the capture format without running an engine.

The differ's scale is measured (``bench/conformance_diff.py``) and tested
(``tests/conformance/test_diff_scale.py``) on captures of millions of rows; running a
topology for that long would measure the engine, not the diff. :func:`write_synthetic`
writes ``rows`` capture lines of a word-count-like result stream (``count/default``:
``[key, count, ratio]``, a distinct row each, spread over four tasks) straight to a file,
streaming (constant memory), with formatting cheap enough for ~1 M lines a second.
``differ_at`` changes one row's count, so a test can check the diff finds exactly it.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["synthetic_row", "write_synthetic"]

_CHUNK = 10_000


def synthetic_row(index: int) -> list:
    """The values of row ``index`` (what :func:`write_synthetic` writes, before any
    ``differ_at`` change)."""
    return [f"k{index:09d}", index % 1000, (index % 97) / 7]


def write_synthetic(path: Path, rows: int, *, engine: str = "storm", case: str = "scale",
                    run_id: str | None = None, differ_at: int | None = None,
                    reverse: bool = False) -> int:
    """Write ``rows`` capture records to ``path``; returns the bytes written.

    ``reverse`` writes them last to first (another engine's order); ``differ_at`` adds
    one to that row's count. The lines are what :class:`conformance.capture.CaptureWriter`
    writes for these values."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    head = json.dumps({"engine": engine, "case": case, "run_id": run_id or f"{engine}-1",
                       "component": "count", "stream": "default"},
                      separators=(",", ":"))[:-1]
    order = range(rows - 1, -1, -1) if reverse else range(rows)
    written = 0
    with open(path, "w", encoding="utf-8") as fh:
        chunk: list[str] = []
        for i in order:
            count = i % 1000 + (1 if i == differ_at else 0)
            chunk.append(f'{head},"task":{i % 4},"values":["k{i:09d}",{count},'
                         f'{(i % 97) / 7!r}]}}\n')
            if len(chunk) >= _CHUNK:
                text = "".join(chunk)
                fh.write(text)
                written += len(text.encode())
                chunk = []
        text = "".join(chunk)
        fh.write(text)
        written += len(text.encode())
    return written
