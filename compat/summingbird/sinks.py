"""Sinks: where ``write`` sends elements (a side effect; elements still flow on).

A sink is any callable taking one element (Summingbird Memory's ``T => Unit``). The
batch platform calls it on the driver, in the memory platform's order; a sink with a
``flush()`` method has it called at the end of every run.
"""

from __future__ import annotations

import json
import os
from typing import IO, Any

from .errors import JobRuntimeError
from .shapes import short_repr


class CollectorSink:
    """Keeps every element in a list, ``items`` (for tests and small results)."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def __call__(self, item: Any) -> None:
        self.items.append(item)

    def __repr__(self) -> str:
        return f"CollectorSink({len(self.items)} items)"


def _jsonable(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


class JsonLinesSink:
    """Writes one JSON document per element to a file (tuples become arrays).

    The file is truncated on the first write of this sink object unless ``append``; it
    stays open between writes and is flushed at the end of each run.
    """

    def __init__(self, path: str | os.PathLike[str], append: bool = False) -> None:
        self.path = os.fspath(path)
        self.append = append
        self._handle: IO[str] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "append": True}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # unpickling re-runs __init__ on the bare instance, as pickle's protocol allows
        self.__init__(state["path"], state["append"])  # type: ignore[misc]

    def __call__(self, item: Any) -> None:
        try:
            line = json.dumps(item, ensure_ascii=False, default=_jsonable)
        except (TypeError, ValueError) as exc:
            raise JobRuntimeError(f"JsonLinesSink({self.path!r}): cannot write "
                                  f"{short_repr(item)}: {exc}") from None
        if self._handle is None:
            # Kept open across calls (one open per run, not per element); closed by close().
            self._handle = open(self.path, "a" if self.append else "w", encoding="utf-8")  # noqa: SIM115
            self.append = True  # later reopenings continue the file
        self._handle.write(line + "\n")

    def flush(self) -> None:
        if self._handle is not None:
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def read(self) -> list[Any]:
        """Every element written so far, decoded (arrays come back as lists)."""
        self.flush()
        if not os.path.exists(self.path):
            return []
        with open(self.path, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]

    def __repr__(self) -> str:
        return f"JsonLinesSink({self.path!r})"
