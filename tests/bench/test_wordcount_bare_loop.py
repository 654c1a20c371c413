"""bench/wordcount.py times the bare loop several times (before, between and after the
engine runs) and states every ratio against their median: where the timings go, the
median and the range, the JSON and the report lines, and one short run with the storm
engine only (in this process). Nothing here asserts on speed."""

from __future__ import annotations

import json

import pytest

from bench.wordcount import main, parse_args
from bench.wordcount_figures import (
    DEFAULT_BARE_RUNS,
    BareLoopTimings,
    CountCheck,
    RunFigures,
    bare_loop_slots,
)
from bench.wordcount_report import build_report, goal_text, summary_lines


def run(name: str, rate: float, engine: str, variant: str | None = "heron",
        path: str | None = None) -> RunFigures:
    return RunFigures(run=name, reason="finished", words=1000, counted=1000,
                      wall_seconds=1000 / rate, window_seconds=1000 / rate,
                      tuples_per_second=rate, counts={"a": 1000}, engine=engine,
                      variant=variant, path=path)


def test_the_timings_go_first_last_and_evenly_between():
    assert bare_loop_slots(3, 8) == [0, 4, 8]
    assert bare_loop_slots(4, 9) == [0, 3, 6, 9]
    assert bare_loop_slots(2, 5) == [0, 5]
    assert bare_loop_slots(1, 5) == [0]
    assert bare_loop_slots(3, 0) == [0, 0, 0]  # nothing to go between
    assert bare_loop_slots(0, 4) == []
    slots = bare_loop_slots(5, 2)  # more timings than gaps: some run back to back
    assert len(slots) == 5 and slots[0] == 0 and slots[-1] == 2 and slots == sorted(slots)


def test_the_median_the_spread_and_the_range():
    timings = BareLoopTimings(1000)
    for when, rate in (("before the engine runs", 800_000.0), ("after heron", 1_200_000.0),
                       ("after the engine runs", 1_000_000.0)):
        timings.add(when, run("bare Python loop", rate, "bare loop", None))
    assert timings.median_rate == 1_000_000.0
    assert timings.spread == pytest.approx(1.5)
    assert timings.over(500_000.0) == pytest.approx(
        {"median": 0.5, "fastest": 500_000 / 1_200_000, "slowest": 0.625})
    timings.add("after storm", run("bare Python loop", 900_000.0, "bare loop", None))
    assert timings.median_rate == 950_000.0  # an even number: the middle two's mean
    first = run("bare Python loop", 800_000.0, "bare loop", None)
    assert timings.apply(first) is first
    assert first.tuples_per_second == 950_000.0
    assert first.wall_seconds == pytest.approx(1000 / 950_000)
    out = timings.as_json()
    assert [t["when"] for t in out["timings"]] == [
        "before the engine runs", "after heron", "after the engine runs", "after storm"]
    assert (out["median_words_per_second"], out["ratios_against"]) == (950_000.0, "median")
    assert (out["fastest_words_per_second"], out["slowest_words_per_second"]) == (
        1_200_000.0, 800_000.0)


def test_every_ratio_to_the_bare_loop_is_against_the_median():
    args = parse_args(["--engines", "heron", "--paths", "compiled", "--variants", "heron",
                       "--reliability", "at-most-once"])
    timings = BareLoopTimings(1000)
    rates = (1_000_000.0, 600_000.0, 800_000.0)
    for when, rate in zip(("before the engine runs", "after heron", "after the engine runs"),
                          rates):
        timings.add(when, run("bare Python loop", rate, "bare loop", None))
    bare = timings.apply(run("bare Python loop", rates[0], "bare loop", None))
    heron = run("heron", 400_000.0, "heron", "heron", "compiled")
    runs = [bare, heron]
    check = CountCheck(True, "bare Python loop = heron")
    report = build_report(args, runs, {}, check, (1.0, 1.0, 1.0), (1.0, 1.0, 1.0), None,
                          bare_timings=timings)
    assert report["bare_loop"]["median_words_per_second"] == 800_000.0
    assert report["heron_over_bare_loop"] == pytest.approx(0.5)
    assert report["runs"]["heron"]["over_bare_loop"] == pytest.approx(0.5)
    assert report["runs"]["heron"]["over_bare_loop_range"] == pytest.approx([0.4, 400 / 600])
    assert "over_bare_loop_range" not in report["runs"]["bare Python loop"]
    goal = report["goals"][0]
    assert goal["value"] == pytest.approx(0.5) and goal["range"] == pytest.approx(
        [0.4, 400 / 600])
    assert "0.50x the bare loop (median of its timings; 0.40-0.67x against the fastest and " \
           "the slowest)" in goal_text(goal)
    flat = " ".join(str(line) for line in summary_lines(report, runs, check))
    assert "the median of 3 timings" in flat
    assert ("the bare loop, timed 3 times (words/s): 1,000,000 before the engine runs; "
            "600,000 after heron; 800,000 after the engine runs; median 800,000") in flat
    assert "every ratio to the bare loop is against the median" in flat


def test_one_timing_reports_as_before():
    args = parse_args(["--bare-runs", "1"])
    timings = BareLoopTimings(1000)
    timings.add("before the engine runs", run("bare Python loop", 1e6, "bare loop", None))
    report = build_report(args, [run("bare Python loop", 1e6, "bare loop", None)], {},
                          CountCheck(True, ""), (1.0,) * 3, (1.0,) * 3, None,
                          bare_timings=timings)
    assert len(report["bare_loop"]["timings"]) == 1
    assert all("range" not in g for g in report["goals"])


def test_the_bare_runs_argument(capsys):
    assert parse_args([]).bare_runs == DEFAULT_BARE_RUNS == 3
    assert parse_args(["--bare-runs", "5"]).bare_runs == 5
    with pytest.raises(SystemExit):
        parse_args(["--bare-runs", "0"])
    capsys.readouterr()


def test_a_short_run_times_the_bare_loop_around_the_runs(capsys):
    """Storm's engine only (in this process) on 2,000 words: the bare loop before the
    runs, between them and after them, and the run's "bare Python loop" is the median."""
    assert main(["--words", "2000", "--engines", "storm", "--reliability", "at-most-once",
                 "--variants", "heron", "--backpressure", "0", "--bare-runs", "3",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    bare = report["bare_loop"]
    assert [t["when"] for t in bare["timings"]] == [
        "before the engine runs", "after single process", "after the engine runs"]
    assert report["runs"]["bare Python loop"]["tuples_per_second"] == pytest.approx(
        bare["median_words_per_second"])
    assert report["runs"]["storm"]["over_bare_loop"] == pytest.approx(
        report["runs"]["storm"]["tuples_per_second"] / bare["median_words_per_second"])
    assert report["counts_match"] is True
