"""Algebird's laws, driven by hypothesis, for every monoid and semigroup we ship."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat.summingbird.monoids import (
    Averaged,
    AveragedValue,
    CountMinSketch,
    First,
    HyperLogLog,
    Last,
    MapMerge,
    Max,
    Min,
    Monoid,
    Product,
    ProductSemigroup,
    Semigroup,
    SetUnion,
    Sum,
    TopK,
)
from compat.summingbird.monoids.laws import (
    check_associative,
    check_commutative,
    check_identity,
    check_laws,
    check_sum_option,
)

small_ints = st.integers(min_value=-10**6, max_value=10**6)
words = st.sampled_from(["a", "b", "c", "d", "e", "f", "g"])
HLL = HyperLogLog(bits=6)
CMS = CountMinSketch(eps=0.05, delta=0.1, seed=7)
TOP3 = TopK(3, key=len)


def hll_values():
    return st.lists(st.one_of(small_ints, words), max_size=30).map(lambda xs: HLL.create(*xs))


def cms_values():
    return st.lists(words, max_size=20).map(lambda xs: CMS.sum(CMS.create(x) for x in xs))


def averaged_values():
    return st.lists(st.integers(-1000, 1000), max_size=10).map(
        lambda xs: Averaged().sum(Averaged.of(x) for x in xs))


def close(a, b):
    """Averages are associative only up to rounding."""
    return a.count == b.count and math.isclose(a.mean, b.mean, rel_tol=1e-9, abs_tol=1e-9)


CASES = [
    ("sum", Sum(), small_ints, None),
    ("max", Max(), small_ints, None),
    ("min", Min(), small_ints, None),
    ("first", First(), small_ints, None),
    ("last", Last(), small_ints, None),
    ("set_union", SetUnion(), st.frozensets(words), None),
    (
        "map_merge",
        MapMerge(Sum()),
        st.dictionaries(words, small_ints.filter(lambda v: v != 0), max_size=5),
        None,
    ),
    ("map_merge_max", MapMerge(Max()), st.dictionaries(words, small_ints, max_size=5), None),
    ("product", Product(Sum(), SetUnion()), st.tuples(small_ints, st.frozensets(words)), None),
    (
        "product_semigroup",
        ProductSemigroup(Max(), First()),
        st.tuples(small_ints, small_ints),
        None,
    ),
    ("averaged", Averaged(), averaged_values(), close),
    (
        "top_k",
        TOP3,
        st.lists(words | st.text(max_size=4), max_size=6).map(
            lambda xs: TOP3.sum(TOP3.of(x) for x in xs)
        ),
        None,
    ),
    ("hyperloglog", HLL, hll_values(), None),
    ("count_min_sketch", CMS, cms_values(), None),
]


@pytest.mark.parametrize(("name", "sg", "values", "eq"), CASES, ids=[c[0] for c in CASES])
def test_laws_hold(name, sg, values, eq):
    @settings(max_examples=60, deadline=None)
    @given(values, values, values)
    def laws(a, b, c):
        check_laws(sg, a, b, c, **({"eq": eq} if eq else {}))

    laws()


def test_commutativity_is_declared_where_it_holds_and_only_there():
    commutative = {Sum(), Max(), Min(), SetUnion(), MapMerge(Sum()), Product(Sum(), SetUnion()),
                   Averaged(), TOP3, HLL, CMS}
    for sg in commutative:
        assert sg.commutative, sg
    for sg in (First(), Last(), MapMerge(Last()), ProductSemigroup(Max(), First())):
        assert not sg.commutative, sg
        with pytest.raises(AssertionError, match="declares commutative"):
            # The law checker catches a false claim, and these really are order-sensitive.
            claimed = Semigroup.of(sg.plus, commutative=True)
            a, b = ((1, 1), (2, 2)) if isinstance(sg, ProductSemigroup) else \
                (({"k": 1}, {"k": 2}) if isinstance(sg, MapMerge) else (1, 2))
            check_commutative(claimed, a, b)


def test_function_monoid_laws_and_a_broken_one_is_caught():
    concat = Monoid.of("", lambda a, b: a + b)
    check_laws(concat, "ab", "c", "de")
    assert concat.sum(["a", "b", "c"]) == "abc" and concat.sum([]) == ""
    minus = Semigroup.of(lambda a, b: a - b)
    with pytest.raises(AssertionError, match="not associative"):
        check_associative(minus, 1, 2, 3)
    bad_zero = Monoid.of(1, lambda a, b: a + b, commutative=True)
    with pytest.raises(AssertionError, match="zero"):
        check_identity(bad_zero, 5)


def test_sum_option_of_nothing_is_none_and_matches_fold():
    for sg in (Sum(), Max(), TOP3, HLL):
        assert sg.sum_option([]) is None
    check_sum_option(Sum(), [1, 2, 3])
    assert Sum().sum([]) == 0


def test_averaged_value_is_count_and_mean():
    avg = Averaged().sum(Averaged.of(x) for x in [1, 2, 3, 10])
    assert avg == AveragedValue(4, 4.0)


def test_top_k_keeps_the_k_largest_by_key_with_total_tie_break():
    top = TOP3.sum(TOP3.of(w) for w in ["bb", "a", "ccc", "dd", "eeee", "aa"])
    assert top == ("eeee", "ccc", "dd")
    assert TOP3.plus(("bb",), ("aa",)) == TOP3.plus(("aa",), ("bb",)) == ("bb", "aa")


@settings(max_examples=20, deadline=None)
@given(st.sets(st.integers(0, 10**9), min_size=0, max_size=3000))
def test_hyperloglog_estimates_distinct_counts(items):
    hll = HyperLogLog(bits=12)
    sketch = hll.sum(hll.create(x) for x in items)
    # Twice each item changes nothing (idempotent), and the estimate is within 10 %.
    assert hll.plus(sketch, hll.create(*items)) == sketch
    assert abs(sketch.estimate() - len(items)) <= max(3, 0.1 * len(items))


def test_hyperloglog_refuses_sketches_of_other_sizes():
    with pytest.raises(ValueError, match="bits=8"):
        HyperLogLog(bits=6).plus(HyperLogLog(bits=6).create("a"), HyperLogLog(bits=8).create("a"))


@settings(max_examples=30, deadline=None)
@given(st.lists(words, max_size=200))
def test_count_min_sketch_never_undercounts_and_is_close(items):
    sketch = CMS.sum(CMS.create(x) for x in items)
    assert sketch.total == len(items)
    for word in set(items) | {"zzz"}:
        true = items.count(word)
        estimate = CMS.frequency(sketch, word)
        assert true <= estimate <= true + CMS.eps * len(items) + 1


def test_count_min_sketch_refuses_other_parameters():
    other = CountMinSketch(eps=0.05, delta=0.1, seed=8)
    with pytest.raises(ValueError, match="share eps, delta and seed"):
        CMS.plus(CMS.create("a"), other.create("a"))


def test_sketch_hashing_is_stable_across_processes():
    import subprocess
    import sys

    code = ("from compat.summingbird.monoids import HyperLogLog; "
            "print(sorted(HyperLogLog(bits=6).create('a', 1, ('x', 2.5)).registers.items()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONHASHSEED": "123", "PATH": ""}, cwd=".")
    assert out.stdout.strip() == str(sorted(HLL.create("a", 1, ("x", 2.5)).registers.items()))
