"""Canonical rows: what two captures are compared on.

A capture record (``{"engine", "case", "run_id", "component", "stream", "task",
"values"}``) carries provenance that differs between engines by design (engine, run id,
task ids) and values whose spelling can differ without their meaning differing (dict key
order, a tuple that came back as a list, ``-0.0``, the last bits of a float sum computed in
another order). Canonicalisation keeps what must agree and normalises the rest:

- the row is ``[component, stream, *values]`` with the values at the comparison's
  ``ignore_columns`` dropped (engine, case, run id and task never take part);
- tuples and lists are lists; dicts have their keys sorted (keys that are not strings are
  spelled as their canonical JSON); sets are lists in canonical order;
- floats are rounded to ``Comparison.float_digits`` significant digits, ``-0.0`` is ``0.0``,
  and the non-finite floats, which JSON cannot spell, become ``{"$float": "nan"}``,
  ``{"$float": "inf"}`` and ``{"$float": "-inf"}`` (so every NaN equals every other NaN);
- bytes become ``{"$bytes": "<hex>"}``; anything else ``{"$repr": repr(value)}``;
- ints and floats stay distinct (``1`` is not ``1.0``: a consumer sees a different type),
  and so do ``True`` and ``1``.

Each canonical row has one canonical JSON spelling (:func:`canonical_json`): sorted keys, no
spaces, UTF-8 kept as it is. That string is the join key on Spark and the stable sort order
of every list of rows the report shows; :func:`decode_row` turns it back into the row.

These rules exist here and nowhere else. The differ (:mod:`conformance.diff`) applies them
on Spark's executors, one capture line at a time (:mod:`conformance.diff_rows` calls
:func:`canonical_row`, :func:`per_key_entry` and :func:`reduce_value`); :func:`count_rows`
and :func:`per_key_rows` apply the same functions to records in memory, for tests and
small inputs, without a JVM.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from conformance.model import Comparison

__all__ = [
    "canonical_json", "canonical_row", "canonical_value", "count_rows", "decode_row",
    "describe_comparison", "keep_record", "per_key_entry", "per_key_rows", "reduce_value",
    "round_float", "wanted_streams",
]


class CaptureRecordError(ValueError):
    """A capture record lacks what a comparison needs (names the record and the field)."""


def round_float(value: float, digits: int) -> Any:
    """``value`` rounded to ``digits`` significant digits; ``-0.0`` is ``0.0``; NaN and the
    infinities become their tagged spelling."""
    if math.isnan(value):
        return {"$float": "nan"}
    if math.isinf(value):
        return {"$float": "inf" if value > 0 else "-inf"}
    if value == 0.0:
        return 0.0
    rounded = float(f"{value:.{max(digits, 1) - 1}e}")
    return 0.0 if rounded == 0.0 else rounded


def canonical_value(value: Any, float_digits: int = 12) -> Any:
    """The canonical form of one tuple value (recursively)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return round_float(value, float_digits)
    if isinstance(value, (list, tuple)):
        return [canonical_value(v, float_digits) for v in value]
    if isinstance(value, Mapping):
        items = {}
        for key, item in value.items():
            if isinstance(key, str):
                name = key
            else:
                name = canonical_json(canonical_value(key, float_digits))
            items[name] = canonical_value(item, float_digits)
        return dict(sorted(items.items()))
    if isinstance(value, (set, frozenset)):
        members = [canonical_value(v, float_digits) for v in value]
        return sorted(members, key=canonical_json)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": bytes(value).hex()}
    return {"$repr": repr(value)}


def canonical_json(row: Any) -> str:
    """The one JSON spelling of a canonical row (or value): the join key and sort key."""
    return json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def decode_row(text: str) -> list[Any]:
    """A canonical row back from its canonical JSON."""
    return json.loads(text)


def wanted_streams(comparison: Comparison) -> frozenset[tuple[str, str]]:
    """The ``(component, stream)`` pairs a comparison keeps (empty: every stream)."""
    return frozenset((str(c), str(s)) for c, s in comparison.streams)


_streams = wanted_streams


def keep_record(record: Mapping[str, Any], comparison: Comparison,
                streams: frozenset[tuple[str, str]] | None = None) -> bool:
    """Whether a record's stream takes part in the comparison (all do when the
    comparison names none)."""
    wanted = _streams(comparison) if streams is None else streams
    if not wanted:
        return True
    return (str(record.get("component")), str(record.get("stream"))) in wanted


def _values(record: Mapping[str, Any]) -> list[Any]:
    try:
        values = record["values"]
    except (KeyError, TypeError):
        raise CaptureRecordError(
            f"capture record without 'values': {_short(record)}") from None
    if not isinstance(values, (list, tuple)):
        raise CaptureRecordError(
            f"capture record 'values' is a {type(values).__name__}, not a list: "
            f"{_short(record)}")
    return list(values)


def _short(record: Any, limit: int = 200) -> str:
    text = repr(record)
    return text if len(text) <= limit else text[:limit] + "..."


def _drop_columns(values: list[Any], ignore: Iterable[int]) -> list[Any]:
    n = len(values)
    drop = {i % n for i in ignore if -n <= i < n} if n else set()
    return [v for i, v in enumerate(values) if i not in drop] if drop else values


def canonical_row(record: Mapping[str, Any], comparison: Comparison) -> list[Any]:
    """``[component, stream, *values]`` of one capture record, canonicalised, the values
    at ``comparison.ignore_columns`` dropped."""
    values = _drop_columns(_values(record), comparison.ignore_columns)
    digits = comparison.float_digits
    return [record.get("component"), record.get("stream"),
            *(canonical_value(v, digits) for v in values)]


def _rows_view(records: Iterable[Mapping[str, Any]], comparison: Comparison) -> Iterator[str]:
    streams = _streams(comparison)
    for record in records:
        if keep_record(record, comparison, streams):
            yield canonical_json(canonical_row(record, comparison))


def reduce_value(old: Any, new: Any, how: str) -> Any:
    """Two values of one key reduced with ``how`` (``max``, ``min`` and ``sum`` skip
    ``None``; ``last`` keeps ``new``, the later one). Associative, so Spark may reduce a
    key's values in any grouping as long as ``last`` is given them in capture order."""
    return _reduce(old, new, how)


def _reduce(old: Any, new: Any, how: str) -> Any:
    if how == "last":
        return new
    if new is None:
        return old
    if old is None:
        return new
    if how == "sum":
        return old + new
    try:
        bigger = new > old
    except TypeError:  # mixed types: fall back on the canonical spelling's order
        bigger = canonical_json(canonical_value(new)) > canonical_json(canonical_value(old))
    if how == "max":
        return new if bigger else old
    return old if bigger or new == old else new  # min


def per_key_rows(records: Iterable[Mapping[str, Any]],
                 comparison: Comparison) -> list[list[Any]]:
    """One canonical row per key: ``[component, stream, *key values, final value]``.

    The key is the values at ``key_columns``; the value, at ``value_column``, is reduced
    over the key's records in capture order with ``comparison.reduce`` (``max``, ``min``
    and ``sum`` skip ``None``; ``last`` keeps the last record's value). Rows come sorted by
    their canonical JSON.
    """
    if comparison.value_column is None or not comparison.key_columns:
        raise ValueError("a per_key view needs key_columns and value_column")
    streams = _streams(comparison)
    digits = comparison.float_digits
    finals: dict[str, tuple[list[Any], Any]] = {}
    for record in records:
        if not keep_record(record, comparison, streams):
            continue
        key, value = per_key_entry(record, comparison)
        text = canonical_json(key)
        if text in finals:
            finals[text] = (key, _reduce(finals[text][1], value, comparison.reduce))
        else:
            finals[text] = (key, value)
    rows = [[*key, canonical_value(value, digits)] for key, value in finals.values()]
    rows.sort(key=canonical_json)
    return rows


def per_key_entry(record: Mapping[str, Any], comparison: Comparison) -> tuple[list[Any], Any]:
    """A record's canonical key ``[component, stream, *key values]`` and its raw value
    (reduced before it is canonicalised, so ``max`` compares the values themselves)."""
    values = _values(record)
    try:
        key_values = [values[i] for i in comparison.key_columns]
        # a per_key comparison has its value column (checked when it was made)
        value = values[comparison.value_column]  # type: ignore[index]
    except IndexError:
        raise CaptureRecordError(
            f"capture record has {len(values)} values; the per-key comparison reads "
            f"key columns {list(comparison.key_columns)} and value column "
            f"{comparison.value_column}: {_short(record)}") from None
    digits = comparison.float_digits
    return ([record.get("component"), record.get("stream"),
             *(canonical_value(v, digits) for v in key_values)], value)


def count_rows(records: Iterable[Mapping[str, Any]], comparison: Comparison) -> Counter[str]:
    """How many times each canonical row (by its canonical JSON) occurs in the view the
    comparison asks for (every row, or the final row per key)."""
    if comparison.kind == "per_key":
        return Counter(canonical_json(row) for row in per_key_rows(records, comparison))
    return Counter(_rows_view(records, comparison))


def describe_comparison(comparison: Comparison) -> list[str]:
    """What canonicalisation did, in words, for the report."""
    notes = []
    if comparison.streams:
        notes.append("streams compared: " + ", ".join(
            f"{c}/{s}" for c, s in sorted(_streams(comparison))))
    else:
        notes.append("streams compared: every captured stream")
    notes.append("rows are [component, stream, *values]; engine, run id and task ignored")
    if comparison.ignore_columns:
        notes.append("value columns ignored: "
                     + ", ".join(str(i) for i in comparison.ignore_columns))
    notes.append(f"floats rounded to {comparison.float_digits} significant digits; "
                 "-0.0 is 0.0; NaN equals NaN")
    notes.append("dicts compared with sorted keys; tuples as lists")
    if comparison.kind == "per_key":
        notes.append(
            f"per key: key = value columns {', '.join(map(str, comparison.key_columns))}, "
            f"final value = {comparison.reduce} of column {comparison.value_column}; "
            "rows are [component, stream, *key, value]")
    return notes
