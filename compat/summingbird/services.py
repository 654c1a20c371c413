"""Services: read-only lookups for ``left_join`` and ``lookup``.

``get(key)`` returns the value or ``None``; ``multi_get(keys)`` answers many keys at
once, which is how platforms call it (one round trip per chunk of elements). A service
travels to the workers that run the join, so it must be picklable: the SQLite service
carries only its path and opens the file where it runs.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from .sqlite import Table


class Service(ABC):
    """A read-only key/value lookup."""

    @abstractmethod
    def get(self, key: Hashable) -> Any:
        """The value for ``key`` or ``None``."""

    def multi_get(self, keys: Iterable[Hashable]) -> dict[Hashable, Any]:
        """The value for each key (``None`` when absent)."""
        return {k: self.get(k) for k in keys}


class InMemoryService(Service):
    """A dict snapshot taken when the job is written (Summingbird's ``MemoryService``)."""

    def __init__(self, mapping: Mapping[Hashable, Any]) -> None:
        self._data = dict(mapping)

    def get(self, key: Hashable) -> Any:
        return self._data.get(key)

    def multi_get(self, keys: Iterable[Hashable]) -> dict[Hashable, Any]:
        return {k: self._data.get(k) for k in keys}

    def __repr__(self) -> str:
        return f"InMemoryService({len(self._data)} keys)"


class FunctionService(Service):
    """A pure function ``key -> value or None`` (Summingbird's test ``Service(fn)``)."""

    def __init__(self, fn: Callable[[Hashable], Any]) -> None:
        if not callable(fn):
            raise TypeError(f"FunctionService needs a callable, got {fn!r}")
        self.fn = fn

    def get(self, key: Hashable) -> Any:
        return self.fn(key)


class SQLiteService(Service):
    """Reads a table written by ``SQLiteStore`` (same file format), opened read-only."""

    def __init__(self, path: str | os.PathLike[str], table: str = "store",
                 value_codec: str = "pickle") -> None:
        self._table = Table(path, table, value_codec, read_only=True)

    def get(self, key: Hashable) -> Any:
        return self._table.get_many([key])[key]

    def multi_get(self, keys: Iterable[Hashable]) -> dict[Hashable, Any]:
        return self._table.get_many(keys)

    def close(self) -> None:
        self._table.close()

    def __repr__(self) -> str:
        return f"SQLiteService({self._table.path!r}, table={self._table.table!r})"
