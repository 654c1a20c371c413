"""Synthetic captures: many rows in the capture format without running an engine.

The differ's scale is measured (``bench/conformance_diff.py``) and tested
(``tests/conformance/test_diff_scale.py``) on captures of millions of rows; running a
topology for that long would measure the engine, not the diff. :func:`write_synthetic`
writes ``rows`` capture lines of a word-count-like result stream (``count/default``:
``[key, count, ratio]``, a distinct row each, spread over four tasks) straight to a file,
streaming (constant memory), with formatting cheap enough for ~1 M lines a second.
``differ_at`` changes one row's count, so a test can check the diff finds exactly it.
:func:`write_synthetic_tasks` writes the same rows as an engine run now does, a capture
directory with one file per task (``count_<task>.jsonl``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

__all__ = ["synthetic_row", "write_synthetic", "write_synthetic_tasks"]

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
    with open(path, "w", encoding="utf-8") as fh:
        return _write([fh], rows, engine=engine, case=case, run_id=run_id,
                      differ_at=differ_at, reverse=reverse, tasks=4)


def write_synthetic_tasks(directory: Path, rows: int, *, tasks: int = 4,
                          engine: str = "storm", case: str = "scale",
                          run_id: str | None = None, differ_at: int | None = None,
                          reverse: bool = False) -> int:
    """The rows of :func:`write_synthetic` as an engine run's capture directory: row
    ``i`` in task ``i % tasks``'s file ``count_<task>.jsonl``; returns the bytes
    written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    handles: list[IO[str]] = [open(directory / f"count_{t}.jsonl", "w", encoding="utf-8")
                              for t in range(tasks)]
    try:
        return _write(handles, rows, engine=engine, case=case, run_id=run_id,
                      differ_at=differ_at, reverse=reverse, tasks=tasks)
    finally:
        for fh in handles:
            fh.close()


def _write(handles: list[IO[str]], rows: int, *, engine: str, case: str,
           run_id: str | None, differ_at: int | None, reverse: bool, tasks: int) -> int:
    """Row ``i`` (task ``i % tasks``) goes to ``handles[task % len(handles)]``."""
    head = json.dumps({"engine": engine, "case": case, "run_id": run_id or f"{engine}-1",
                       "component": "count", "stream": "default"},
                      separators=(",", ":"))[:-1]
    order = range(rows - 1, -1, -1) if reverse else range(rows)
    written = 0
    files = len(handles)
    chunks: list[list[str]] = [[] for _ in range(files)]

    def flush(n: int) -> int:
        text = "".join(chunks[n])
        handles[n].write(text)
        chunks[n] = []
        return len(text.encode())

    for i in order:
        count = i % 1000 + (1 if i == differ_at else 0)
        task = i % tasks
        chunk = chunks[task % files]
        chunk.append(f'{head},"task":{task},"values":["k{i:09d}",{count},'
                     f'{(i % 97) / 7!r}]}}\n')
        if len(chunk) >= _CHUNK:
            written += flush(task % files)
    for n in range(files):
        written += flush(n)
    return written
