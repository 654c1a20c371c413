"""The differ: two captures of one case compared as multisets of canonical rows, on
PySpark, end to end.

Each side is a set of capture files (JSON lines, :mod:`conformance.capture`; a directory
stands for its ``*.jsonl`` files, one per task of an engine's run) that Spark reads in
parallel: every file is split into partitions, the executors parse and
canonicalise each line (:mod:`conformance.diff_rows`, applying the rules of
:mod:`conformance.canonical`), and Spark counts the copies of every canonical row, per
stream. The two count tables are joined (full outer, on the row) and every differing row
lands in one of three buckets:

- **missing**: copies of a left row the right lacks (``left > right``);
- **duplicate extras**: more copies on the right of a row the left has;
- **novel extras**: copies on the right of a row the left never had.

From those the observed :class:`~conformance.model.SemanticClass` follows: nothing →
exact; duplicate extras only → at-least-once superset; missing only → at-most-once subset;
novel rows, or missing and duplicates together → divergent.

The driver sees only the summary: one row of counts per stream and the first
``sample_limit`` differing rows of each stream (in canonical-JSON order); the result's
``samples`` are the first ``sample_limit`` of them all, ``streams`` has each stream's
counts and rows when more than one stream was compared. No Python
process holds a capture, so a capture is as large as the cluster can read; with a
cluster master the files must be where every executor reads them (a shared path).
Records already in memory (a case's expected rows, tests, the Summingbird catalogue) are
written as the same lines and handed to Spark as a parallelized collection.

A line that does not parse is dropped and noted when it is what a writer killed mid-line
leaves: the file's last line, without a newline after it. Any other (one in the middle,
or a second) is a :class:`CaptureFormatError` naming the file and the line.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from conformance import diff_rows
from conformance.canonical import CaptureRecordError, decode_row, describe_comparison
from conformance.capture import (
    CaptureFormatError,
    capture_files,
    capture_line,
    capture_size,
    ends_cut_short,
    first_unreadable_line,
)
from conformance.model import Comparison, DiffCounts, DiffResult, DiffRow, SemanticClass
from conformance.spark_progress import stage_progress

if TYPE_CHECKING:  # pragma: no cover - typing only
    from pyspark.sql import Column, DataFrame, Row, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["CaptureSource", "classify_counts", "diff_captures", "diff_many", "diff_outputs"]

#: one side of a diff: capture files, or records in memory
CaptureSource = Sequence[Path | str] | Iterable[Mapping[str, Any]]
#: bytes of capture a partition reads (Spark splits larger files)
SPLIT_BYTES = 32 * 2**20


def classify_counts(counts: DiffCounts) -> SemanticClass:
    """The semantic class the three difference counts amount to."""
    if counts.novel_extras:
        return SemanticClass.DIVERGENT
    if counts.missing and counts.duplicate_extras:
        return SemanticClass.DIVERGENT
    if counts.missing:
        return SemanticClass.AT_MOST_ONCE
    if counts.duplicate_extras:
        return SemanticClass.AT_LEAST_ONCE
    return SemanticClass.EXACT


def _schema() -> StructType:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    return StructType([StructField("row", StringType(), False),
                       StructField("stream", StringType(), False),
                       StructField("n", LongType(), False)])


# -- the sides ------------------------------------------------------------------------------
class _Side:
    """One side's lines as Spark RDDs: one per file (its index is the file's ``source``
    number), or one parallelized collection of records already in memory."""

    def __init__(self, spark: SparkSession, source: CaptureSource, name: str) -> None:
        self.name = name
        self.files: list[str] = []
        self.bytes: int | None = None
        sc = spark.sparkContext
        if _is_paths(source):
            # A capture directory (an engine run: one file per task) or glob stands for
            # its files. The driver lists their names only; each file is an RDD of its
            # own so a cut-short last line is counted against the file it ends.
            self.files = [str(f) for p in source
                          for f in capture_files(p)]
            for f in self.files:
                if not Path(f).is_file():  # say so now, not as a Spark job's traceback
                    raise CaptureFormatError(f"{f}: no such capture file or directory")
            self.bytes = capture_size(Path(f) for f in self.files)
            parts = _partitions([capture_size([Path(f)]) for f in self.files],
                                sc.defaultParallelism)
            self.rdds = [sc.textFile(f, minPartitions=n)
                         for f, n in zip(self.files, parts)] or [sc.parallelize([], 1)]
        else:
            # not file names, so the records themselves (what the parameter's union leaves)
            lines = [_record_line(r) for r in source]  # type: ignore[arg-type]
            self.bytes = sum(len(line.encode()) + 1 for line in lines)
            slices = max(1, min(sc.defaultParallelism, len(lines) // 2000 or 1))
            self.rdds = [sc.parallelize(lines, slices)]

    def describe(self, source: int) -> str:
        return self.files[source] if self.files else f"the {self.name} records"

    def counted(self, spark: SparkSession, comparison: Comparison) -> DataFrame:
        """``(row, stream, n)``: copies per canonical row, summed over the side."""
        from pyspark.sql import functions as F

        sc = spark.sparkContext
        if comparison.kind == "per_key":
            entries = sc.union([rdd.mapPartitionsWithIndex(functools.partial(
                diff_rows.key_entries, source=i, comparison=comparison))
                for i, rdd in enumerate(self.rdds)])
            rows = (entries.reduceByKey(diff_rows.combine_with(comparison.reduce))
                    .map(functools.partial(diff_rows.final_row,
                                           digits=comparison.float_digits)))
        else:
            rows = sc.union([rdd.mapPartitionsWithIndex(functools.partial(
                diff_rows.row_counts, source=i, comparison=comparison))
                for i, rdd in enumerate(self.rdds)])
        frame = spark.createDataFrame(rows, _schema(), verifySchema=False)
        return frame.groupBy("row", "stream").agg(F.sum("n").cast("long").alias("n"))


def _partitions(sizes: list[int], parallelism: int) -> list[int]:
    """Partitions to read each file of a side in: one per :data:`SPLIT_BYTES`, and, when
    the side holds more than a megabyte, at least ``parallelism`` in all (the largest
    files split further), so every core reads. Many task files already give parallelism;
    splitting each of them again would only add tasks."""
    parts = [max(1, -(-size // SPLIT_BYTES)) for size in sizes]
    if sum(sizes) > 2**20:
        while sum(parts) < parallelism:
            i = max(range(len(sizes)), key=lambda n: sizes[n] / parts[n])
            parts[i] += 1
    return parts


def _is_paths(source: CaptureSource) -> TypeGuard[Sequence[Path | str]]:
    if isinstance(source, (str, Path)):
        raise TypeError("a capture source is a list of files, not one path: pass [path]")
    return (isinstance(source, (list, tuple)) and bool(source)
            and all(isinstance(s, (str, Path)) for s in source))


def _record_line(record: Mapping[str, Any]) -> str:
    values = record.get("values") if isinstance(record, Mapping) else None
    if not isinstance(values, (list, tuple)):
        raise CaptureRecordError(f"capture record 'values' is a {type(values).__name__}, "
                                 f"not a list: {str(record)[:200]}")
    return capture_line(str(record.get("engine", "")), str(record.get("case", "")),
                        str(record.get("run_id", "")),
                        # as read: a record without them is written back without them
                        record.get("component"),  # type: ignore[arg-type]
                        record.get("stream"),  # type: ignore[arg-type]
                        record.get("task"), values, record.get("msg_id"))


# -- the comparison -------------------------------------------------------------------------
#: what each pair's summary counts, per stream (the fields of DiffCounts, in its order)
_METRICS = ("rows_left", "rows_right", "distinct_left", "distinct_right", "missing",
            "duplicate_extras", "novel_extras", "differing")


def _pair_metrics(left_n: Column, right_n: Column, prefix: str) -> list[Column]:
    """One pair's eight summary columns over the joined table (named ``prefix`` + metric)."""
    from pyspark.sql import functions as F

    def total(expr: Column) -> Column:
        return F.coalesce(F.sum(expr), F.lit(0)).cast("long")

    def number(cond: Column) -> Column:
        return F.coalesce(F.sum(F.when(cond, 1).otherwise(0)), F.lit(0)).cast("long")

    values = (total(left_n), total(right_n), number(left_n > 0), number(right_n > 0),
              total(F.when(left_n > right_n, left_n - right_n).otherwise(0)),
              total(F.when((left_n > 0) & (right_n > left_n), right_n - left_n).otherwise(0)),
              total(F.when(left_n == 0, right_n).otherwise(0)),
              number(left_n != right_n))
    return [value.alias(prefix + name) for value, name in zip(values, _METRICS)]


def _compare(spark: SparkSession, frames: Mapping[str, DataFrame],
             pairs: Sequence[tuple[str, str]], *, comparison: str, sample_limit: int,
             notes: list[str], sides: Mapping[str, _Side] | None = None,
             progress: Callable[[str], None] | None = None
             ) -> dict[tuple[str, str], DiffResult]:
    """The join of every side's ``(row, stream, n)`` table, in one pass: each pair's
    summary and samples from the same joined table (a case's expected rows and every
    engine's capture are read once, not once per pair)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    began = time.monotonic()
    names = list(frames)
    column = {name: f"n{i}" for i, name in enumerate(names)}
    joined: DataFrame | None = None
    for name in names:
        frame = frames[name].withColumnRenamed("n", column[name])
        joined = frame if joined is None else joined.join(frame, on=["row", "stream"],
                                                          how="full_outer")
    assert joined is not None, "a comparison has at least two sides"
    joined = joined.select("row", "stream", *(F.coalesce(F.col(c), F.lit(0)).cast("long")
                                              .alias(c) for c in column.values()))
    joined = joined.persist(StorageLevel.MEMORY_AND_DISK)
    sides = sides or {}
    results: dict[tuple[str, str], DiffResult] = {}
    try:
        label = ", ".join(f"{right} vs {left}" for left, right in pairs)
        with stage_progress(spark, progress, label):
            summary = joined.groupBy("stream").agg(*(
                metric for i, (left, right) in enumerate(pairs)
                for metric in _pair_metrics(F.col(column[left]), F.col(column[right]),
                                            f"p{i}_"))).collect()
            for i, (left, right) in enumerate(pairs):
                results[(left, right)] = _pair_result(
                    joined, summary, f"p{i}_", (column[left], column[right]),
                    left=left, right=right, comparison=comparison,
                    sample_limit=sample_limit, notes=notes,
                    sides=(sides.get(left), sides.get(right)))
    finally:
        joined.unpersist()
    elapsed = round(time.monotonic() - began, 3)
    for result in results.values():
        result.spark_seconds = elapsed
    return results


def _pair_result(joined: DataFrame, summary: list[Row], prefix: str,
                 columns: tuple[str, str], *, left: str, right: str, comparison: str,
                 sample_limit: int, notes: list[str],
                 sides: tuple[_Side | None, _Side | None]) -> DiffResult:
    """One pair's DiffResult from the shared summary rows (and, when rows differ, one
    query for its first ``sample_limit`` differing rows per stream)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    per_stream = [{"stream": row["stream"],
                   **{name: int(row[prefix + name]) for name in _METRICS}}
                  for row in summary]
    bad = [row for row in per_stream if row["stream"] == diff_rows.BAD_STREAM]
    # a stream only the other pairs' sides hold is not one this pair compared
    streams = [row for row in per_stream if row["stream"] != diff_rows.BAD_STREAM
               and (row["rows_left"] or row["rows_right"])]
    dropped = _check_unreadable(joined, bad, sides, columns)
    counts = DiffCounts()
    for row in streams:
        for name in _METRICS:
            setattr(counts, name, getattr(counts, name) + row[name])
    left_n, right_n = F.col(columns[0]), F.col(columns[1])
    by_stream: list[tuple[str, DiffRow]] = []
    if counts.differing and sample_limit > 0:
        rank = Window.partitionBy("stream").orderBy("row")
        differs = (left_n != right_n) & (F.col("stream") != diff_rows.BAD_STREAM)
        first = (joined.where(differs)
                 .withColumn("rank", F.row_number().over(rank))
                 .where(F.col("rank") <= sample_limit)
                 .orderBy("row").collect())
        by_stream = [(x["stream"], DiffRow(row=decode_row(x["row"]),
                                           left=int(x[columns[0]]), right=int(x[columns[1]])))
                     for x in first]
    inputs: dict[str, Any] = {}
    for label, side in zip((left, right), sides):
        if side is not None:
            inputs[label] = {"files": len(side.files), "bytes": side.bytes}
    for label, side_rows in ((left, counts.rows_left), (right, counts.rows_right)):
        inputs.setdefault(label, {})["rows"] = side_rows
    samples = [row for _, row in by_stream[:sample_limit]]
    stream_counts = []
    if len(streams) > 1:
        for data in sorted(streams, key=lambda x: x["stream"]):
            key = data["stream"]
            component, stream = decode_row(key)
            mine = [{"row": x.row, "left": x.left, "right": x.right}
                    for k, x in by_stream if k == key]
            stream_counts.append({"component": component, "stream": stream,
                                  **{k: data[k] for k in _METRICS}, "samples": mine})
    return DiffResult(left=left, right=right, observed=classify_counts(counts),
                      counts=counts, samples=samples, comparison=comparison,
                      notes=list(notes) + dropped, inputs=inputs, spark_seconds=0.0,
                      streams=stream_counts)


def _check_unreadable(joined: DataFrame, bad: list[dict[str, int | str]],
                      sides: tuple[_Side | None, _Side | None],
                      columns: tuple[str, str]) -> list[str]:
    """Notes on dropped lines; a :class:`CaptureFormatError` naming the file and line when
    a file holds an unreadable line other than the one cut-short last line (no newline
    after it) a killed writer can leave."""
    if not bad:
        return []
    rows = joined.where(joined["stream"] == diff_rows.BAD_STREAM).collect()
    notes = []
    for row in rows:
        source = int(row["row"].rsplit("/", 1)[1])
        for side, n in ((sides[0], int(row[columns[0]])), (sides[1], int(row[columns[1]]))):
            if side is None or not n:
                continue
            where = side.describe(source)
            if n == 1 and side.files and ends_cut_short(Path(where)):
                notes.append(f"{where}: 1 cut-short line dropped (a writer was killed "
                             "mid-line)")
                continue
            first = first_unreadable_line(Path(where)) if side.files else None
            detail = f"; the first: {first}" if first is not None else \
                "; read it with conformance.capture.read_capture to see the first"
            raise CaptureFormatError(
                f"{where}: {n} line(s) are not capture records (a killed writer leaves "
                f"at most one cut-short last line, without a newline){detail}")
    return notes


# -- entry points ---------------------------------------------------------------------------
def diff_captures(spark: SparkSession, left_source: CaptureSource,
                  right_source: CaptureSource, comparison: Comparison, *, left: str,
                  right: str, sample_limit: int = 20,
                  progress: Callable[[str], None] | None = None) -> DiffResult:
    """Classify ``right``'s capture against ``left``'s (the reference), on Spark.

    Each source is a list of capture files or directories (read by the executors; a
    directory is its ``*.jsonl`` files, one per task of an engine's run) or an iterable of
    capture records (dicts with ``component``, ``stream`` and ``values``; provenance is
    ignored). Only the streams in ``comparison.streams`` count (every stream when it
    names none). ``kind="rows"`` compares the multisets of canonical rows;
    ``kind="per_key"`` first reduces each side to one final value per key and compares
    those ``[component, stream, *key, value]`` rows. ``progress`` gets a line of Spark's
    stage progress about twice a second while the job runs.
    """
    if left == right:
        raise ValueError(f"both sides of a diff are named {left!r}")
    return diff_many(spark, {left: left_source, right: right_source}, [(left, right)],
                     comparison, sample_limit=sample_limit, progress=progress)[(left, right)]


def diff_many(spark: SparkSession, sources: Mapping[str, CaptureSource],
              pairs: Sequence[tuple[str, str]], comparison: Comparison, *,
              sample_limit: int = 20,
              progress: Callable[[str], None] | None = None
              ) -> dict[tuple[str, str], DiffResult]:
    """:func:`diff_captures` for several pairs over the same sides at once: each side is
    read and counted once, all of them joined in one table, and every pair's summary
    computed in one Spark job (a conformance case compares its expected rows with each
    engine, and the engines with each other: one pass instead of one per pair). Each
    result is what :func:`diff_captures` returns for that pair; their ``spark_seconds``
    is the shared pass's. A side no pair names is not read."""
    if not pairs:
        return {}
    for pair in pairs:
        for name in pair:
            if name not in sources:
                raise KeyError(f"the pair {pair} names {name!r}, which is not a side")
        if pair[0] == pair[1]:
            raise ValueError(f"the pair {pair} compares a side with itself")
    names = [name for name in sources if any(name in pair for pair in pairs)]
    sides = {name: _Side(spark, sources[name], name) for name in names}
    with _shuffle_partitions(spark, *sides.values()):
        frames = {name: side.counted(spark, comparison) for name, side in sides.items()}
        return _compare(spark, frames, pairs, comparison=comparison.kind,
                        sample_limit=sample_limit, notes=describe_comparison(comparison),
                        sides=sides, progress=progress)


def diff_outputs(spark: SparkSession, left_rows: CaptureSource, right_rows: CaptureSource,
                 comparison: Comparison, *, left: str, right: str,
                 sample_limit: int = 20,
                 progress: Callable[[str], None] | None = None) -> DiffResult:
    """:func:`diff_captures` under its original name (records or capture files)."""
    return diff_captures(spark, left_rows, right_rows, comparison, left=left, right=right,
                         sample_limit=sample_limit, progress=progress)


class _shuffle_partitions:
    """Shuffle partitions sized to the input (~64 MB of capture each, at least the
    session's own), restored afterwards; adaptive execution coalesces small ones."""

    def __init__(self, spark: SparkSession, *sides: _Side) -> None:
        self.spark = spark
        total = sum(s.bytes or 0 for s in sides)
        self.wanted = max(1, total // (64 * 2**20))
        self.saved: str | None = None

    def __enter__(self) -> None:
        conf = self.spark.conf
        self.saved = conf.get("spark.sql.shuffle.partitions")
        if self.wanted > int(self.saved or 0):
            conf.set("spark.sql.shuffle.partitions", str(self.wanted))

    def __exit__(self, *exc: object) -> None:
        if self.saved is not None:
            self.spark.conf.set("spark.sql.shuffle.partitions", self.saved)
