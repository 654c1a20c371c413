"""Replay-safe merges: a summer writes the store and the lineages it merged in one transaction.

At-least-once means an input may arrive twice: a tuple tree times out or fails (a summer
process was killed holding a cache, a Stream Manager dropped a batch), the spout replays
the element, and every node re-derives the same outputs. A plain ``merge`` would count
them twice, so the design is **de-duplication by lineage, committed atomically with the
merge** (not idempotent values: a ``Sum`` is not idempotent, and asking every monoid to
be a semilattice would rule out counting):

* every element carries a lineage that is the same for a replay and different for any
  other element (``planner.py``);
* a summer merges a cache of inputs in one SQLite transaction that also records each
  input's lineage in a ledger table beside the store (``<table>__sb_merged``, keyed by
  run scope, summer and lineage); inputs whose lineage is already there are not merged
  again;
* the summer acks its inputs only after that transaction commits, and emits downstream
  before acking. So a crash before the commit loses nothing durable (the inputs time
  out and are replayed), and a crash after it loses nothing either (the replays are
  recognised, and re-emitted downstream with the previous value recorded for them, so a
  chained summer still receives its delta).

The ledger costs one small row per input per summer for the length of a run scope.
``run_streaming`` deletes its scope's rows when the run ends. A deployed topology's
scope is ``summingbird.run.id`` (``-o summingbird.run.id=...``) or, by default, the
topology's name, so re-running the same topology over the same input does not count it
twice.

Stores other than ``SQLiteStore`` (a user's own ``Store``) merge through their
``multi_merge`` and de-duplicate in the memory of the summer task: replays caused by
timeouts are still recognised, replays after the task's process died are not.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from ...sqlite import Table
from ...stores import SQLiteStore
from . import serial

LEDGER_SUFFIX = "__sb_merged"
_CHUNK = 400
#: a merge SQLite refuses as busy is retried this many times, backing off up to 1 s
LOCK_RETRIES = 12


@dataclass
class Entry:
    """One input of a summer's cache: the key (and its canonical text), lineage, delta."""

    key: Hashable
    key_text: str
    lineage: str
    delta: Any


def _note(exc: BaseException, label: str) -> None:
    note = f"in Summingbird node {label}"
    if note not in getattr(exc, "__notes__", ()):
        if sys.version_info >= (3, 11):
            exc.add_note(note)
        else:  # Python 3.10 has no add_note: keep the note where 3.11 would
            # (3.10's BaseException declares no __notes__, the type checker's 3.10 neither)
            exc.__notes__ = [*getattr(exc, "__notes__", ()), note]  # type: ignore[attr-defined]


def _plus(semigroup: Any, before: Any, delta: Any, label: str) -> Any:
    if before is None:
        return delta
    try:
        return semigroup.plus(before, delta)
    except Exception as exc:
        _note(exc, label)
        raise


class Ledger:
    """Merges batches of entries, each at most once per scope; returns the previous values."""

    #: entries recognised as already merged (replays), since this ledger was opened
    replays: int = 0

    def merge(self, entries: Sequence[Entry]) -> list[Any]:  # pragma: no cover - abstract
        """The value just before each entry's delta (for a replayed entry: the one recorded
        when it was first merged, ``None`` when previous values are not kept)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release connections."""


class SQLiteLedger(Ledger):
    """The transactional ledger for ``SQLiteStore`` (see the module docstring)."""

    def __init__(self, store: SQLiteStore, *, scope: str, summer: str, task: int,
                 semigroup: Any, label: str, keep_previous: bool) -> None:
        # The store's own table object is per store; the ledger opens its own connection
        # (private codec name: the file format belongs to compat.summingbird.sqlite).
        codec = store._table.codec
        self.table = Table(store.path, store.table, codec, read_only=False)
        self.ledger = f"{store.table}{LEDGER_SUFFIX}"
        self.scope = scope
        self.summer = summer
        self.task = task
        self.semigroup = semigroup
        self.label = label
        self.keep_previous = keep_previous
        self._dump_value = self.table.dumps if codec == "json" else serial.dumps
        self._ready = False

    def _connection(self) -> sqlite3.Connection:
        conn = self.table.connection()
        if not self._ready:
            # WAL with synchronous=NORMAL survives a killed process (what at-least-once
            # is about); it does not fsync every commit, which would cost milliseconds.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                f'CREATE TABLE IF NOT EXISTS "{self.ledger}" (scope TEXT NOT NULL, '
                "summer TEXT NOT NULL, lineage TEXT NOT NULL, key TEXT, task INTEGER, prev BLOB, "
                "PRIMARY KEY (scope, summer, lineage)) WITHOUT ROWID"
            )
            self._ready = True
        return conn

    def _seen(self, conn: sqlite3.Connection, lineages: list[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for start in range(0, len(lineages), _CHUNK):
            part = lineages[start:start + _CHUNK]
            marks = ",".join("?" * len(part))
            rows = conn.execute(f'SELECT lineage, prev FROM "{self.ledger}" WHERE scope = ? AND '
                                f"summer = ? AND lineage IN ({marks})",
                                [self.scope, self.summer, *part])
            found.update((lineage, None if prev is None else serial.loads(prev))
                         for lineage, prev in rows)
        return found

    def merge(self, entries: Sequence[Entry]) -> list[Any]:
        """Merge in one transaction; a transaction SQLite refuses as busy (another task's
        writer, or a stale read snapshot of this connection) is rolled back whole and tried
        again, so a retry can neither double-merge nor lose a merge."""
        if not entries:
            return []
        for attempt in range(LOCK_RETRIES):
            try:
                return self._merge_once(entries)
            except sqlite3.OperationalError as exc:
                text = str(exc).lower()
                if ("locked" not in text and "busy" not in text) or attempt == LOCK_RETRIES - 1:
                    raise
                time.sleep(min(1.0, 0.02 * 2 ** attempt))
        raise AssertionError("unreachable")

    def _merge_once(self, entries: Sequence[Entry]) -> list[Any]:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            seen = self._seen(conn, list({e.lineage for e in entries}))
            fresh = [e for e in entries if e.lineage not in seen]
            key_texts = list(dict.fromkeys(e.key_text for e in fresh))
            running = self.table.select(conn, key_texts)
            previous: dict[str, Any] = {}
            ledger_rows = []
            for entry in fresh:
                before = running.get(entry.key_text)
                running[entry.key_text] = _plus(self.semigroup, before, entry.delta, self.label)
                previous[entry.lineage] = before
                kept = serial.dumps(before, self.label) \
                    if self.keep_previous and before is not None else None
                ledger_rows.append((self.scope, self.summer, entry.lineage, entry.key_text,
                                    self.task, kept))
            conn.executemany(f'INSERT OR REPLACE INTO "{self.table.table}" (k, v) VALUES (?, ?)',
                             [(k, self._dump_value(running[k])) for k in key_texts])
            conn.executemany(f'INSERT INTO "{self.ledger}" (scope, summer, lineage, key, task, '
                             "prev) VALUES (?, ?, ?, ?, ?, ?)", ledger_rows)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self.replays += len(entries) - len(fresh)
        return [previous[e.lineage] if e.lineage in previous else seen[e.lineage]
                for e in entries]

    def close(self) -> None:
        self.table.close()


class MemoryLedger(Ledger):
    """For any other store: ``multi_merge`` per flush, lineages remembered by this task only."""

    def __init__(self, store: Any, *, semigroup: Any, label: str, keep_previous: bool) -> None:
        self.store = store
        self.semigroup = semigroup
        self.label = label
        self.keep_previous = keep_previous
        self.seen: dict[str, Any] = {}

    def merge(self, entries: Sequence[Entry]) -> list[Any]:
        fresh = [e for e in entries if e.lineage not in self.seen]
        self.replays += len(entries) - len(fresh)
        sums: dict[str, Any] = {}
        keys: dict[str, Hashable] = {}
        for entry in fresh:
            keys.setdefault(entry.key_text, entry.key)
            sums[entry.key_text] = _plus(self.semigroup, sums.get(entry.key_text), entry.delta,
                                         self.label)
        try:
            before = self.store.multi_merge({keys[k]: v for k, v in sums.items()})
        except Exception as exc:
            _note(exc, self.label)
            raise
        running = {k: before.get(keys[k]) for k in sums}
        out: dict[str, Any] = {}
        for entry in fresh:
            prev = running[entry.key_text]
            running[entry.key_text] = _plus(self.semigroup, prev, entry.delta, self.label)
            out[entry.lineage] = prev
            self.seen[entry.lineage] = prev if self.keep_previous else None
        return [out[e.lineage] if e.lineage in out else self.seen[e.lineage] for e in entries]


def open_ledger(store: Any, *, scope: str, summer: str, task: int, semigroup: Any, label: str,
                keep_previous: bool) -> Ledger:
    """The ledger for ``store``: transactional for SQLite stores, in-memory otherwise."""
    if isinstance(store, SQLiteStore):
        return SQLiteLedger(store, scope=scope, summer=summer, task=task, semigroup=semigroup,
                            label=label, keep_previous=keep_previous)
    return MemoryLedger(store, semigroup=semigroup, label=label, keep_previous=keep_previous)


def merged_lineages(store: SQLiteStore, scope: str) -> list[tuple[str, str, str, int]]:
    """``(summer, lineage, key text, task)`` of every merge recorded for ``scope``."""
    table = Table(store.path, store.table, "pickle", read_only=False)
    try:
        rows = (
            table.connection()
            .execute(
                "SELECT summer, lineage, key, task "
                f'FROM "{store.table}{LEDGER_SUFFIX}" WHERE scope = ? '
                "ORDER BY summer, lineage",
                [scope],
            )
            .fetchall()
        )
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    finally:
        table.close()
    return [tuple(r) for r in rows]


def forget_scope(store: SQLiteStore, scope: str) -> None:
    """Delete a finished run's ledger rows (and the ledger table once it is empty)."""
    ledger = f"{store.table}{LEDGER_SUFFIX}"
    table = Table(store.path, store.table, "pickle", read_only=False)
    try:
        conn = table.connection()
        conn.execute(f'DELETE FROM "{ledger}" WHERE scope = ?', [scope])
        if conn.execute(f'SELECT 1 FROM "{ledger}" LIMIT 1').fetchone() is None:
            conn.execute(f'DROP TABLE "{ledger}"')
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
    finally:
        table.close()
