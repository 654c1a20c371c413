"""What the differ runs on Spark's executors: capture lines in, canonical rows out.

Each function here takes one partition of one side's capture lines (Spark hands them
over one at a time; nothing holds a partition) and applies the canonical rules of
:mod:`conformance.canonical`, which exist only there:

- :func:`row_counts` (``kind="rows"``): ``(row, stream, n)`` per canonical row, ``row``
  its canonical JSON, ``stream`` the JSON of ``[component, stream]``; copies of a row in
  a partition are counted before they leave Python (bounded: the local table is flushed
  every :data:`FLUSH_ROWS` distinct rows);
- :func:`key_entries` (``kind="per_key"``): ``(key, (kind, order, value))`` per key, the
  values of a key already reduced within the partition; :func:`combine` reduces two
  entries (Spark's ``reduceByKey``); :func:`final_row` turns a key's final entry into its
  ``(row, stream, 1)``. ``order`` is ``(source, partition, line)``: capture order, which
  ``reduce="last"`` needs.

A line that is not a capture record is not an error here: it comes out as a row of the
pseudo-stream :data:`BAD_STREAM` counting it against its source file, and the driver
decides (a killed writer leaves at most one cut-short last line per file, without its
newline; any other is an error).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from conformance.canonical import (
    canonical_json,
    canonical_row,
    canonical_value,
    keep_record,
    per_key_entry,
    reduce_value,
    wanted_streams,
)
from conformance.capture import parse_line
from conformance.model import Comparison

__all__ = ["BAD_STREAM", "FLUSH_ROWS", "bad_row", "combine", "final_row", "key_entries",
           "row_counts"]

#: the pseudo-stream of lines that are not capture records (never a real stream: NUL)
BAD_STREAM = "\x00unreadable"
#: distinct rows a partition counts before it hands its counts to Spark
FLUSH_ROWS = 100_000

_ENTRY, _BAD = 0, 1


def bad_row(source: int) -> str:
    """The row that counts unreadable lines of source file ``source``."""
    return f"{BAD_STREAM}/{source}"


def _stream_key(component: Any, stream: Any) -> str:
    return json.dumps([component, stream], ensure_ascii=False)


def _records(lines: Iterable[str], source: int, comparison: Comparison,
             bad: Counter) -> Iterator[tuple[int, dict[str, Any]]]:
    streams = wanted_streams(comparison)
    for number, line in enumerate(lines):
        if not line or line.isspace():
            continue
        try:
            record = parse_line(line)
        except ValueError:
            bad[source] += 1
            continue
        if keep_record(record, comparison, streams):
            yield number, record


def row_counts(partition: int, lines: Iterable[str], *, source: int,
               comparison: Comparison) -> Iterator[tuple[str, str, int]]:
    """``(canonical row JSON, stream key, copies)`` of one partition (``kind="rows"``)."""
    counts: Counter[tuple[str, str]] = Counter()
    bad: Counter[int] = Counter()
    for _, record in _records(lines, source, comparison, bad):
        row = canonical_row(record, comparison)
        counts[(canonical_json(row), _stream_key(row[0], row[1]))] += 1
        if len(counts) >= FLUSH_ROWS:
            yield from ((r, s, n) for (r, s), n in counts.items())
            counts.clear()
    yield from ((r, s, n) for (r, s), n in counts.items())
    for where, n in bad.items():
        yield bad_row(where), BAD_STREAM, n


def key_entries(partition: int, lines: Iterable[str], *, source: int,
                comparison: Comparison) -> Iterator[tuple[str, tuple]]:
    """``(canonical key JSON, (kind, order, value))`` of one partition (``kind="per_key"``),
    each key's values reduced in capture order."""
    finals: dict[str, tuple] = {}
    bad: Counter[int] = Counter()
    how = comparison.reduce
    for number, record in _records(lines, source, comparison, bad):
        key, value = per_key_entry(record, comparison)
        text = canonical_json(key)
        entry = (_ENTRY, (source, partition, number), value)
        old = finals.get(text)
        finals[text] = entry if old is None else (_ENTRY, entry[1],
                                                  reduce_value(old[2], value, how))
    yield from finals.items()
    for where, n in bad.items():
        yield bad_row(where), (_BAD, (where, 0, 0), n)


def combine_with(how: str) -> Callable[[tuple, tuple], tuple]:
    """The ``reduceByKey`` function for reduction ``how``."""
    def reduce_entries(a: tuple, b: tuple) -> tuple:
        return combine(a, b, how)
    return reduce_entries


def combine(a: tuple, b: tuple, how: str) -> tuple:
    """Two entries of one key as one: the earlier one's value reduced with the later's."""
    if a[0] == _BAD:
        return (_BAD, a[1], a[2] + b[2])
    first, later = (a, b) if a[1] <= b[1] else (b, a)
    return (_ENTRY, later[1], reduce_value(first[2], later[2], how))


def final_row(item: tuple[str, tuple], digits: int) -> tuple[str, str, int]:
    """A key and its final entry as ``(row, stream, copies)``."""
    key, (kind, _, value) = item
    if kind == _BAD:
        return key, BAD_STREAM, int(value)
    row = json.loads(key)
    row.append(canonical_value(value, digits))
    return canonical_json(row), _stream_key(row[0], row[1]), 1
