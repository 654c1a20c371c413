"""The differ: two captures of one case compared as multisets of canonical rows, on
PySpark.

One pass does it (the count-per-row diff): each side's canonical rows are counted, the
two count tables are joined with a null-safe full outer join, and every differing row
lands in one of three buckets:

- **missing**: copies of a left row the right lacks (``left > right``);
- **duplicate extras**: more copies on the right of a row the left has;
- **novel extras**: copies on the right of a row the left never had.

From those the observed :class:`~conformance.model.SemanticClass` follows: nothing →
exact; duplicate extras only → at-least-once superset; missing only → at-most-once subset;
novel rows, or missing and duplicates together → divergent.

Canonicalisation (:mod:`conformance.canonical`) runs in Python before Spark sees a row:
each side goes in as one column of canonical JSON (the join key: maps, tuples and floats
already normalised, so Spark never compares a MAP column) with a count per distinct
row. Spark does the grouping, the join and the aggregates; only the counts and the first
``sample_limit`` differing rows (in canonical-JSON order) come back to the driver.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from conformance.canonical import count_rows, decode_row, describe_comparison
from conformance.model import Comparison, DiffCounts, DiffResult, DiffRow, SemanticClass

if TYPE_CHECKING:  # pragma: no cover - typing only
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["classify_counts", "count_table", "diff_counters", "diff_outputs"]


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


def count_table(spark: SparkSession, counts: Counter[str] | Mapping[str, int],
                name: str) -> DataFrame:
    """A DataFrame ``(row string, <name> long)``: one canonical row and its copies per
    line, summed per row on Spark."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    schema = StructType([StructField("row", StringType(), True),
                         StructField("n", LongType(), False)])
    frame = spark.createDataFrame([(row, int(n)) for row, n in counts.items()], schema)
    return frame.groupBy("row").agg(F.sum("n").cast("long").alias(name))


def diff_counters(spark: SparkSession, left_counts: Mapping[str, int],
                  right_counts: Mapping[str, int], *, left: str, right: str,
                  comparison: str = "rows", sample_limit: int = 20,
                  notes: list[str] | None = None) -> DiffResult:
    """The Spark diff of two count tables keyed by canonical JSON."""
    from pyspark.sql import functions as F

    a = count_table(spark, left_counts, "l").alias("a")
    b = count_table(spark, right_counts, "r").alias("b")
    joined = (a.join(b, F.col("a.row").eqNullSafe(F.col("b.row")), "full_outer")
              .select(F.coalesce(F.col("a.row"), F.col("b.row")).alias("row"),
                      F.coalesce(F.col("a.l"), F.lit(0)).cast("long").alias("l"),
                      F.coalesce(F.col("b.r"), F.lit(0)).cast("long").alias("r")))
    l, r = F.col("l"), F.col("r")

    def total(expr: Any) -> Any:
        return F.coalesce(F.sum(expr), F.lit(0)).cast("long")

    def number(cond: Any) -> Any:
        return F.coalesce(F.sum(F.when(cond, 1).otherwise(0)), F.lit(0)).cast("long")

    summary = joined.agg(
        total(l).alias("rows_left"),
        total(r).alias("rows_right"),
        number(l > 0).alias("distinct_left"),
        number(r > 0).alias("distinct_right"),
        total(F.when(l > r, l - r).otherwise(0)).alias("missing"),
        total(F.when((l > 0) & (r > l), r - l).otherwise(0)).alias("duplicate_extras"),
        total(F.when(l == 0, r).otherwise(0)).alias("novel_extras"),
        number(l != r).alias("differing"),
    ).collect()[0]
    counts = DiffCounts(**{k: int(v) for k, v in summary.asDict().items()})
    samples: list[DiffRow] = []
    if counts.differing and sample_limit > 0:
        first = joined.where(l != r).orderBy("row").limit(sample_limit).collect()
        samples = [DiffRow(row=decode_row(x["row"]), left=int(x["l"]), right=int(x["r"]))
                   for x in first]
    return DiffResult(left=left, right=right, observed=classify_counts(counts),
                      counts=counts, samples=samples, comparison=comparison,
                      notes=list(notes or []))


def diff_outputs(spark: SparkSession, left_rows: Iterable[Mapping[str, Any]],
                 right_rows: Iterable[Mapping[str, Any]], comparison: Comparison, *,
                 left: str, right: str, sample_limit: int = 20) -> DiffResult:
    """Classify ``right``'s capture against ``left``'s (the reference).

    Rows are capture records (dicts with ``component``, ``stream`` and ``values``; other
    fields are provenance and ignored). Only the streams in ``comparison.streams`` count
    (every stream when it names none). ``kind="rows"`` compares the multisets of
    canonical rows; ``kind="per_key"`` first reduces each side to one final value per key
    and compares those ``[component, stream, *key, value]`` rows.
    """
    left_counts = count_rows(left_rows, comparison)
    right_counts = count_rows(right_rows, comparison)
    return diff_counters(spark, left_counts, right_counts, left=left, right=right,
                         comparison=comparison.kind, sample_limit=sample_limit,
                         notes=describe_comparison(comparison))
