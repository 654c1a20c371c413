"""Every catalogue job on the memory platform equals its plain-Python oracle (hypothesis)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat.summingbird import MemoryPlatform, SQLiteStore
from compat.summingbird.testing import CATALOGUE, differences, run_job


@pytest.mark.parametrize("job", CATALOGUE, ids=[job.name for job in CATALOGUE])
def test_memory_platform_matches_the_oracle(job):
    @settings(max_examples=40, deadline=None)
    @given(st.integers(0, 2**32 - 1), st.integers(0, 60))
    def check(seed, size):
        inputs = job.sample(random.Random(seed), size)
        outcome = run_job(MemoryPlatform(), job, inputs)
        assert differences(job, outcome, job.expected(inputs)) == []

    check()


def test_the_catalogue_covers_the_required_shapes():
    names = {job.name for job in CATALOGUE}
    assert {"word_count", "chained_sums", "left_join", "merge_two_sources",
            "also_side_write"} <= names


@pytest.mark.parametrize("job", CATALOGUE[:5], ids=[job.name for job in CATALOGUE[:5]])
def test_sqlite_stores_give_the_same_result(job, tmp_path):
    inputs = job.sample(random.Random(3), 40)
    outcome = run_job(MemoryPlatform(), job, inputs,
                      store_factory=lambda name: SQLiteStore(tmp_path / "stores.db", table=name))
    assert differences(job, outcome, job.expected(inputs)) == []


def test_differences_reports_what_differs():
    job = CATALOGUE[0]
    inputs = {"lines": ["a b", "a"]}
    outcome = run_job(MemoryPlatform(), job, inputs)
    outcome.stores["counts"]["a"] = 5
    assert differences(job, outcome, job.expected(inputs)) == [
        "store 'counts': keys only on one side [], values differing [('a', 5, 2)]"]
