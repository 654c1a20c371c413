"""The two examples: same results on both platforms, equal to plain Python over their data."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from compat.summingbird.monoids.laws import check_laws
from examples.summingbird_pageviews.__main__ import DATA as PAGEVIEWS_DATA
from examples.summingbird_pageviews.__main__ import main as pageviews_main
from examples.summingbird_pageviews.job import PAGE_STATS, PageStatsMonoid
from examples.summingbird_wordcount.__main__ import SAMPLE
from examples.summingbird_wordcount.__main__ import main as wordcount_main


def run_cli(main, *args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def expected_word_counts():
    lines = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    return dict(Counter(w for line in lines for w in re.findall(r"[a-z']+", line.lower())))


def expected_page_stats():
    users = {}
    for line in (PAGEVIEWS_DATA / "users.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        users[record["user"]] = record["country"]
    groups = defaultdict(list)
    for line in (PAGEVIEWS_DATA / "views.jsonl").read_text(encoding="utf-8").splitlines():
        user, page, ms = json.loads(line)
        groups[(users.get(user, "??"), page)].append((user, ms))
    return {key: (len(v), sum(ms for _, ms in v), max(ms for _, ms in v), len({u for u, _ in v}))
            for key, v in groups.items()}


def test_wordcount_example_on_memory_matches_plain_python(tmp_path):
    counts = json.loads(run_cli(wordcount_main, "--json"))
    assert counts == expected_word_counts()
    assert "14  the" in run_cli(wordcount_main, "--top", "1")
    # A SQLite store keeps counting across runs.
    store = str(tmp_path / "counts.db")
    run_cli(wordcount_main, "--store", store)
    twice = json.loads(run_cli(wordcount_main, "--store", store, "--json"))
    assert twice == {w: 2 * c for w, c in expected_word_counts().items()}


def test_pageviews_example_on_memory_matches_plain_python():
    rows = json.loads(run_cli(pageviews_main, "--json"))
    expected = expected_page_stats()
    assert {(r["country"], r["page"]) for r in rows} == set(expected)
    for r in rows:
        views, total, longest, viewers = expected[(r["country"], r["page"])]
        assert (r["views"], r["longest_ms"]) == (views, longest)
        assert r["mean_ms"] == pytest.approx(total / views, abs=1e-3)
        assert abs(r["distinct_viewers"] - viewers) <= 1  # HyperLogLog, tiny cardinalities
    assert run_cli(pageviews_main, "--service", "memory", "--json") == run_cli(
        pageviews_main, "--json"
    )


@pytest.mark.timeout(180)
def test_examples_give_the_same_results_on_batch(spark, tmp_path):
    assert json.loads(run_cli(wordcount_main, "--platform", "batch", "--json")) == \
        expected_word_counts()
    out = tmp_path / "enriched.jsonl"
    on_batch = run_cli(pageviews_main, "--platform", "batch", "--json", "--enriched-out", str(out))
    assert on_batch == run_cli(pageviews_main, "--json")
    assert len(out.read_text(encoding="utf-8").splitlines()) == 400


@settings(max_examples=50, deadline=None)
@given(*[st.lists(st.tuples(st.sampled_from("abcdef"), st.integers(0, 10**5)), max_size=8)
         .map(lambda views: PAGE_STATS.sum(PageStatsMonoid.of(u, ms) for u, ms in views))] * 3)
def test_page_stats_monoid_obeys_the_laws(a, b, c):
    check_laws(PAGE_STATS, a, b, c)
