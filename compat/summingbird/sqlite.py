"""The on-disk format shared by ``SQLiteStore`` and ``SQLiteService``.

One table per store: ``k TEXT PRIMARY KEY, v BLOB``. Keys are encoded as canonical,
typed JSON so that equal keys always hit the same row and decode back to the same
Python value (tuples stay tuples, ``1`` and ``"1"`` stay different). Values are pickled
by default: the file is the job's own local, trusted state, exactly like ``shelve``;
``value_codec="json"`` gives a portable file for JSON-able values.

Connections are opened lazily per process and never pickled, so a store or service can
travel to Spark workers (which then open the file themselves).
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .errors import JobDefinitionError

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_CHUNK = 500  # keys per SELECT ... IN (...), well under SQLite's parameter limit


def _to_json(key: Any, where: str) -> Any:
    if key is None or isinstance(key, (str, bool, int, float)):
        return key
    if isinstance(key, tuple):
        return [_to_json(k, where) for k in key]
    if isinstance(key, bytes):
        return {"b": base64.b64encode(key).decode("ascii")}
    raise JobDefinitionError(f"{where}: keys must be str, int, float, bool, None, bytes or "
                             f"tuples of these; got {type(key).__name__}")


def _from_json(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_from_json(v) for v in value)
    if isinstance(value, dict):
        return base64.b64decode(value["b"])
    return value


def encode_key(key: Any, where: str) -> str:
    return json.dumps(_to_json(key, where), ensure_ascii=False, separators=(",", ":"))


def decode_key(text: str) -> Any:
    return _from_json(json.loads(text))


def value_codec(name: str) -> tuple[Callable[[Any], bytes], Callable[[bytes], Any]]:
    if name == "pickle":
        return (lambda v: pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)), pickle.loads
    if name == "json":
        return ((lambda v: json.dumps(v, separators=(",", ":")).encode("utf-8")),
                (lambda b: json.loads(b)))
    raise JobDefinitionError(f"value_codec must be 'pickle' or 'json', got {name!r}")


class Table:
    """A lazily opened, per-process connection to one key/value table."""

    def __init__(self, path: str | os.PathLike[str], table: str, codec: str,
                 read_only: bool) -> None:
        if not _IDENTIFIER.match(table):
            raise JobDefinitionError(f"SQLite table name {table!r} must be an identifier "
                                     "(letters, digits, underscore)")
        self.path = os.path.abspath(os.fspath(path))
        self.table = table
        self.codec = codec
        self.read_only = read_only
        self._dumps, self._loads = value_codec(codec)
        self._conn: sqlite3.Connection | None = None
        self._pid = -1

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "table": self.table, "codec": self.codec,
                "read_only": self.read_only}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # unpickling re-runs __init__ on the bare instance, as pickle's protocol allows
        self.__init__(state["path"], state["table"], state["codec"], state["read_only"])  # type: ignore[misc]

    def where(self) -> str:
        return f"SQLite {self.path}:{self.table}"

    def connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            if self.read_only:
                conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30,
                                       isolation_level=None, check_same_thread=False)
            else:
                conn = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                       check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f'CREATE TABLE IF NOT EXISTS "{self.table}" '
                             "(k TEXT PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    def encode(self, key: Any) -> str:
        return encode_key(key, self.where())

    def dumps(self, value: Any) -> bytes:
        return self._dumps(value)

    def select(self, conn: sqlite3.Connection, encoded: list[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for start in range(0, len(encoded), _CHUNK):
            part = encoded[start:start + _CHUNK]
            marks = ",".join("?" * len(part))
            rows = conn.execute(f'SELECT k, v FROM "{self.table}" WHERE k IN ({marks})', part)
            found.update((k, self._loads(v)) for k, v in rows)
        return found

    def get_many(self, keys: Iterable[Any]) -> dict[Any, Any]:
        keys = list(keys)
        encoded = [self.encode(k) for k in keys]
        try:
            found = self.select(self.connection(), encoded)
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc) or "unable to open" in str(exc):
                return {k: None for k in keys}  # nothing written yet
            raise
        return {k: found.get(e) for k, e in zip(keys, encoded)}

    def rows(self) -> Iterator[tuple[Any, Any]]:
        try:
            cursor = self.connection().execute(f'SELECT k, v FROM "{self.table}" ORDER BY k')
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc) or "unable to open" in str(exc):
                return
            raise
        for k, v in cursor:
            yield decode_key(k), self._loads(v)
