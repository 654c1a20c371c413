"""Stores: where ``sum_by_key`` keeps its totals, with Storehaus's merge contract.

``merge(key, delta)`` adds ``delta`` into the stored value and returns the value just
before the merge (``None`` when the key was absent), which is exactly what
``sum_by_key`` emits downstream as ``(key, (previous, delta))``. A store merges with one
semigroup: the first ``sum_by_key`` that uses it binds it, and a second one with a
different semigroup is refused (Summingbird issue #677: Storm silently merged with the
store's semigroup, not the job's).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Iterator, Mapping
from typing import Any

from .errors import JobDefinitionError
from .services import SQLiteService
from .sqlite import Table


class Store(ABC):
    """A mergeable key/value store."""

    semigroup: Any = None

    def bind_semigroup(self, semigroup: Any, where: str = "") -> None:
        """Fix the semigroup merges use; a different one later is a definition error."""
        if self.semigroup is None:
            self.semigroup = semigroup
        elif self.semigroup != semigroup:
            at = f" at {where}" if where else ""
            raise JobDefinitionError(
                f"sum_by_key{at}: {self.describe()} already merges with {self.semigroup!r}, "
                f"not {semigroup!r}; one store holds values of one semigroup (use another store)")

    def _plus(self, previous: Any, delta: Any) -> Any:
        if previous is None:
            return delta
        if self.semigroup is None:
            raise JobDefinitionError(f"{self.describe()} has no semigroup: pass one to the "
                                     "store or use it in sum_by_key(store, semigroup)")
        return self.semigroup.plus(previous, delta)

    @abstractmethod
    def multi_get(self, keys: Iterable[Hashable]) -> dict[Hashable, Any]:
        """The value of each key, ``None`` for absent ones."""

    def get(self, key: Hashable) -> Any:
        """The value of ``key`` or ``None``."""
        return self.multi_get([key])[key]

    @abstractmethod
    def multi_merge(self, deltas: Mapping[Hashable, Any]) -> dict[Hashable, Any]:
        """Merge every delta; return each key's value just before its merge."""

    def merge(self, key: Hashable, delta: Any) -> Any:
        """Merge one delta; return the value just before the merge (``None`` if absent)."""
        return self.multi_merge({key: delta})[key]

    @abstractmethod
    def put_all(self, values: Mapping[Hashable, Any]) -> None:
        """Overwrite the given keys (initial contents for a job or a test)."""

    @abstractmethod
    def items(self) -> Iterator[tuple[Hashable, Any]]:
        """Every (key, value) held."""

    def contents(self) -> dict[Hashable, Any]:
        """The whole store as a dict (for results and tests)."""
        return dict(self.items())

    def describe(self) -> str:
        return type(self).__name__


class InMemoryStore(Store):
    """A dict in this process (Summingbird Memory's ``mutable.Map``)."""

    def __init__(
        self, initial: Mapping[Hashable, Any] | None = None, semigroup: Any = None
    ) -> None:
        self._data: dict[Hashable, Any] = dict(initial or {})
        self.semigroup = semigroup

    def multi_get(self, keys: Iterable[Hashable]) -> dict[Hashable, Any]:
        return {k: self._data.get(k) for k in keys}

    def get(self, key: Hashable) -> Any:
        return self._data.get(key)

    def merge(self, key: Hashable, delta: Any) -> Any:
        previous = self._data.get(key)
        self._data[key] = self._plus(previous, delta)
        return previous

    def multi_merge(self, deltas: Mapping[Hashable, Any]) -> dict[Hashable, Any]:
        return {k: self.merge(k, d) for k, d in deltas.items()}

    def put_all(self, values: Mapping[Hashable, Any]) -> None:
        self._data.update(values)

    def items(self) -> Iterator[tuple[Hashable, Any]]:
        return iter(list(self._data.items()))

    def describe(self) -> str:
        return f"InMemoryStore({len(self._data)} keys)"


class SQLiteStore(Store):
    """A persistent, embedded store: one SQLite table (see ``sqlite.py`` for the format).

    ``multi_merge`` runs in one ``BEGIN IMMEDIATE`` transaction, so several processes
    can merge into the same file and each merge sees the value it replaces.
    """

    def __init__(self, path: str | os.PathLike[str], table: str = "store", semigroup: Any = None,
                 value_codec: str = "pickle") -> None:
        self._table = Table(path, table, value_codec, read_only=False)
        self.semigroup = semigroup

    @property
    def path(self) -> str:
        return self._table.path

    @property
    def table(self) -> str:
        return self._table.table

    def multi_get(self, keys: Iterable[Hashable]) -> dict[Hashable, Any]:
        return self._table.get_many(keys)

    def multi_merge(self, deltas: Mapping[Hashable, Any]) -> dict[Hashable, Any]:
        table = self._table
        encoded = {k: table.encode(k) for k in deltas}
        conn = table.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = table.select(conn, list(encoded.values()))
            previous: dict[Hashable, Any] = {}
            rows = []
            for key, delta in deltas.items():
                before = found.get(encoded[key])
                previous[key] = before
                rows.append((encoded[key], table.dumps(self._plus(before, delta))))
            conn.executemany(f'INSERT OR REPLACE INTO "{table.table}" (k, v) VALUES (?, ?)', rows)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return previous

    def put_all(self, values: Mapping[Hashable, Any]) -> None:
        table = self._table
        rows = [(table.encode(k), table.dumps(v)) for k, v in values.items()]
        conn = table.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(f'INSERT OR REPLACE INTO "{table.table}" (k, v) VALUES (?, ?)', rows)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def items(self) -> Iterator[tuple[Hashable, Any]]:
        return self._table.rows()

    def as_service(self) -> Any:
        """A read-only service over this store's table (for ``left_join``/``lookup``)."""
        return SQLiteService(self.path, self.table, self._table.codec)

    def close(self) -> None:
        self._table.close()

    def describe(self) -> str:
        return f"SQLiteStore({self.path!r}, table={self.table!r})"
