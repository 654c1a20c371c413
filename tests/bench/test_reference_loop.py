"""bench/reference_loop.py, the plain-Python reference loop the API overhead goal is
stated against: on a few thousand words every mode counts what the fused loop counts
(the benchmark's own words), the figures are all there and add up, and the command line
works. Nothing here asserts on speed."""

from __future__ import annotations

import json

import pytest

from bench import reference_loop
from bench.reference_loop import (
    API_MODES,
    MODES,
    ReferenceFigures,
    benchmark_picker,
    main,
    measure,
    run_api,
    run_fused,
    time_round,
)
from bench.wordcount_figures import TOPOLOGY_HERON, bench_options
from bench.wordcount_runs import load, run_bare_loop


@pytest.fixture(scope="module")
def picker():
    return benchmark_picker(seed=3)


def test_every_mode_counts_the_benchmarks_own_words(picker):
    words = 4_000
    fused = run_fused(words, picker)
    assert sum(fused.values()) == words
    assert run_api(words, picker, named=False) == fused
    assert run_api(words, picker, named=True) == fused
    # the same words as the word-count benchmark's bare loop (one spout task, same seed)
    loaded = load(bench_options(words, 3), 2, TOPOLOGY_HERON)
    assert run_bare_loop(loaded, words, 3).counts == fused


def test_measure_reports_each_mode_and_the_api_overhead(picker):
    figures = measure(words=2_000, rounds=2, seed=3, picker=picker)
    assert figures.counts_match and figures.rounds == 2 and figures.distinct_words > 0
    assert set(figures.seconds) == set(MODES)
    assert all(len(rounds) == 2 for rounds in figures.seconds.values())
    per_word = figures.us_per_word()
    assert all(us > 0 for us in per_word.values())
    overhead = figures.overhead_us()
    assert set(overhead) == set(API_MODES)
    for mode in API_MODES:
        assert overhead[mode] == pytest.approx(per_word[mode] - per_word["fused"])
    out = figures.as_json()
    assert out["rounds"] == 2 and out["statistic"] == "best" and out["counts_match"] is True
    assert set(out["us_per_word"]) == set(MODES)
    assert set(out["overhead_us_per_word"]) == set(API_MODES)


def test_best_and_median_of_the_rounds():
    seconds = {"fused": [1.0, 3.0, 2.0], "plain": [4.0, 2.5, 3.0], "named": [5.0, 4.0, 6.0]}
    best = ReferenceFigures(1_000_000, 7, "best", {k: list(v) for k, v in seconds.items()})
    median = ReferenceFigures(1_000_000, 7, "median", {k: list(v) for k, v in seconds.items()})
    assert best.us_per_word() == {"fused": 1.0, "plain": 2.5, "named": 4.0}
    assert best.overhead_us() == {"plain": 1.5, "named": 3.0}
    assert median.us_per_word() == {"fused": 2.0, "plain": 3.0, "named": 5.0}
    assert median.overhead_us() == {"plain": 1.0, "named": 3.0}


def test_a_mode_that_counts_differently_is_reported(picker, monkeypatch):
    real = reference_loop.run_mode

    def miscounting(mode, words, picker):
        counts = real(mode, words, picker)
        if mode == "named":
            counts[next(iter(counts))] += 1
        return counts
    monkeypatch.setattr(reference_loop, "run_mode", miscounting)
    figures = ReferenceFigures(500, 3)
    fused = time_round(figures, picker)
    assert sum(fused.values()) == 500  # the fused loop's counts are handed back
    assert figures.counts_match is False


def test_the_command_line(capsys):
    assert main(["--words", "1000", "--rounds", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["words"] == 1000 and out["rounds"] == 1 and out["counts_match"] is True
    assert main(["--words", "1000", "--rounds", "1", "--statistic", "median"]) == 0
    text = capsys.readouterr().out
    for part in ("median of 1 rounds", "fused", "plain", "named", "API overhead",
                 "✓ counts"):
        assert part in text, text
    with pytest.raises(SystemExit) as exit_info:
        main(["--rounds", "0"])
    assert exit_info.value.code == 2
    capsys.readouterr()
