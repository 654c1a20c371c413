"""The PySpark differ on constructed captures: every semantic class, the per-key view,
canonicalisation and null-safe joins, through a real Spark job."""

from __future__ import annotations

import pytest

from conformance.diff import classify_counts, diff_outputs
from conformance.model import Comparison, DiffCounts, DiffRow, SemanticClass

# The first Spark job of a run warms the JVM up (several seconds on two cores).
pytestmark = pytest.mark.timeout(180)


def rec(*values, component="count", stream="default", engine="storm", task=1):
    return {"engine": engine, "case": "case", "run_id": f"{engine}-1", "component": component,
            "stream": stream, "task": task, "values": list(values)}


BASE = [rec("a", 1), rec("b", 2), rec("b", 2), rec("c", 3)]


def heron(records):
    """The same records as another engine wrote them (other provenance, other tasks)."""
    return [{**r, "engine": "heron", "run_id": "heron-1", "task": r["task"] + 5}
            for r in records]


def diff(spark, left, right, comparison=None, **kw):
    return diff_outputs(spark, left, right, comparison or Comparison(), left="storm",
                        right="heron", **kw)


# -- the classifier alone --------------------------------------------------------------

@pytest.mark.parametrize("missing,dups,novel,expected", [
    (0, 0, 0, SemanticClass.EXACT),
    (0, 3, 0, SemanticClass.AT_LEAST_ONCE),
    (2, 0, 0, SemanticClass.AT_MOST_ONCE),
    (0, 0, 1, SemanticClass.DIVERGENT),
    (1, 1, 0, SemanticClass.DIVERGENT),
    (1, 0, 1, SemanticClass.DIVERGENT),
])
def test_classify_counts(missing, dups, novel, expected):
    counts = DiffCounts(missing=missing, duplicate_extras=dups, novel_extras=novel)
    assert classify_counts(counts) is expected


# -- the Spark path ----------------------------------------------------------------------

def test_identical_outputs_are_exact(spark):
    result = diff(spark, BASE, heron(list(reversed(BASE))))
    assert result.observed is SemanticClass.EXACT
    assert result.counts == DiffCounts(rows_left=4, rows_right=4, distinct_left=3,
                                       distinct_right=3)
    assert result.samples == []
    assert (result.left, result.right, result.comparison) == ("storm", "heron", "rows")
    assert result.notes


def test_duplicated_rows_are_an_at_least_once_superset(spark):
    result = diff(spark, BASE, heron(BASE + [rec("a", 1), rec("b", 2), rec("b", 2)]))
    assert result.observed is SemanticClass.AT_LEAST_ONCE
    c = result.counts
    assert (c.rows_left, c.rows_right, c.missing, c.duplicate_extras, c.novel_extras,
            c.differing) == (4, 7, 0, 3, 0, 2)
    assert result.samples == [DiffRow(["count", "default", "a", 1], 1, 2),
                              DiffRow(["count", "default", "b", 2], 2, 4)]


def test_missing_rows_are_an_at_most_once_subset(spark):
    result = diff(spark, BASE, heron([rec("b", 2), rec("c", 3)]))
    assert result.observed is SemanticClass.AT_MOST_ONCE
    c = result.counts
    assert (c.missing, c.duplicate_extras, c.novel_extras, c.distinct_right) == (2, 0, 0, 2)
    assert result.samples == [DiffRow(["count", "default", "a", 1], 1, 0),
                              DiffRow(["count", "default", "b", 2], 2, 1)]


def test_novel_rows_are_divergent(spark):
    result = diff(spark, BASE, heron(BASE + [rec("z", 26), rec("z", 26)]))
    assert result.observed is SemanticClass.DIVERGENT
    assert (result.counts.missing, result.counts.duplicate_extras,
            result.counts.novel_extras) == (0, 0, 2)
    assert result.samples == [DiffRow(["count", "default", "z", 26], 0, 2)]


def test_missing_and_duplicated_rows_together_are_divergent(spark):
    result = diff(spark, BASE, heron([rec("a", 1), rec("a", 1), rec("b", 2), rec("c", 3)]))
    assert result.observed is SemanticClass.DIVERGENT
    c = result.counts
    assert (c.missing, c.duplicate_extras, c.novel_extras, c.differing) == (1, 1, 0, 2)


def test_an_empty_side(spark):
    assert diff(spark, [], []).observed is SemanticClass.EXACT
    lost = diff(spark, BASE, [])
    assert lost.observed is SemanticClass.AT_MOST_ONCE
    assert lost.counts.missing == 4 and lost.counts.rows_right == 0
    invented = diff(spark, [], BASE)
    assert invented.observed is SemanticClass.DIVERGENT
    assert invented.counts.novel_extras == 4


def test_samples_are_the_first_differing_rows_in_canonical_order(spark):
    left = [rec(f"w{i:03d}", i) for i in range(50)]
    result = diff(spark, left, heron(list(reversed(left[10:]))), sample_limit=5)
    assert result.counts.differing == 10 and result.counts.missing == 10
    assert [s.row[2] for s in result.samples] == ["w000", "w001", "w002", "w003", "w004"]
    assert diff(spark, left, [], sample_limit=0).samples == []


def test_only_the_compared_streams_count(spark):
    cmp = Comparison(streams=(("count", "default"),))
    right = heron(BASE + [rec("noise", stream="errors"), rec("x", component="split")])
    assert diff(spark, BASE, right, cmp).observed is SemanticClass.EXACT
    assert diff(spark, BASE, right).observed is SemanticClass.DIVERGENT


def test_ignored_columns_do_not_take_part(spark):
    left = [rec("a", 1, "2024-01-01T00:00:01"), rec("b", 2, "2024-01-01T00:00:02")]
    right = [rec("a", 1, "2031-05-05T10:00:00"), rec("b", 2, "2031-05-05T10:00:09")]
    assert diff(spark, left, right).observed is SemanticClass.DIVERGENT
    result = diff(spark, left, right, Comparison(ignore_columns=(2,)))
    assert result.observed is SemanticClass.EXACT
    assert any("ignored: 2" in note for note in result.notes)


def test_floats_and_maps_are_normalised_before_the_join(spark):
    left = [rec("sum", 0.1 + 0.2, {"b": 1, "a": [1, 2]}), rec("zero", -0.0, {}),
            rec("nan", float("nan"), {"k": (1.0, 2.0)})]
    right = [rec("sum", 0.3, {"a": (1, 2), "b": 1}), rec("zero", 0.0, {}),
             rec("nan", float("nan"), {"k": [1.0, 2.0]})]
    assert diff(spark, left, right).observed is SemanticClass.EXACT
    strict = Comparison(float_digits=17)
    result = diff(spark, left, right, strict)
    assert result.observed is SemanticClass.DIVERGENT
    assert result.counts.differing == 2


def test_none_values_join_null_safely(spark):
    left = [rec(None, 1), rec("a", None), rec(None, None), rec(None, None)]
    right = heron([rec(None, None), rec("a", None), rec(None, 1), rec(None, None)])
    assert diff(spark, left, right).observed is SemanticClass.EXACT
    more = diff(spark, left, right + [rec(None, None)])
    assert more.observed is SemanticClass.AT_LEAST_ONCE
    assert more.samples == [DiffRow(["count", "default", None, None], 2, 3)]


def test_per_key_replayed_running_counts_are_exact_on_final_values(spark):
    cmp = Comparison(kind="per_key", key_columns=(0,), value_column=1, reduce="max")
    left = [rec("a", 1), rec("b", 1), rec("a", 2), rec("a", 3)]
    # a replay re-emits running values: more rows, the same final count per word
    right = heron([rec("a", 1), rec("a", 2), rec("b", 1), rec("a", 2), rec("b", 1),
                   rec("a", 3)])
    assert diff(spark, left, right).observed is SemanticClass.AT_LEAST_ONCE  # as rows
    result = diff(spark, left, right, cmp)
    assert result.observed is SemanticClass.EXACT
    assert result.comparison == "per_key"
    assert (result.counts.rows_left, result.counts.rows_right) == (2, 2)


def test_per_key_different_final_value_shows_both_sides(spark):
    cmp = Comparison(kind="per_key", key_columns=(0,), value_column=1, reduce="max")
    left = [rec("a", 1), rec("a", 2), rec("b", 1)]
    right = heron([rec("a", 1), rec("a", 2), rec("a", 3), rec("b", 1)])
    result = diff(spark, left, right, cmp)
    assert result.observed is SemanticClass.DIVERGENT
    assert result.samples == [DiffRow(["count", "default", "a", 2], 1, 0),
                              DiffRow(["count", "default", "a", 3], 0, 1)]
    lost = diff(spark, left, heron([rec("a", 1), rec("a", 2)]), cmp)
    assert lost.observed is SemanticClass.AT_MOST_ONCE
