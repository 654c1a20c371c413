"""The word-count benchmark (bench/wordcount.py) on tiny settings: it completes, reports
every figure (throughput, latency percentiles, peak RSS per heron process kind; at-least-
once throughput and complete latency; the backpressure scenario's rates, pauses, queues
and memory over time; Heron's word count and the streamparse-style one, heron on the
compiled and the pure-Python tuple paths, the issue's goals), the engines' counts agree,
and no process outlives it. Nothing here asserts on speed: timings depend on the machine
and on what else runs on it."""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from bench.wordcount import main, parse_args
from bench.wordcount_figures import (
    DEFAULT_BOLT_COST_US,
    DEFAULT_BP_HIGH_MB,
    DEFAULT_MAX_PENDING,
    GOAL_ALO_RATIO,
    GOAL_COMPLETE_P99_MS,
    GOAL_FLOOD_P99_MS,
    GOAL_RATIO,
    GOAL_STREAMPARSE_RATIO,
    TOPOLOGY,
    TOPOLOGY_HERON,
    ProcessSampler,
    RunFigures,
    bench_options,
    check_counts,
    check_groups,
    latency_figures,
    percentile,
    process_kind,
    window_rates,
)
from bench.wordcount_report import evaluate_goals, goal_text
from bench.wordcount_runs import (
    _BoltSink,
    compiled_available,
    end_markers,
    load,
    local_hosting,
    run_bare_loop,
    run_ceiling,
    variant_of,
)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "wordcount.py"
HERON_KINDS = {"Topology Master", "Stream Manager", "Metrics Manager", "executor",
               "instance: count_bolt", "instance: word_spout"}
#: the at-most-once runs, in order (heron on both tuple paths, both word counts)
AMO_RUNS = ["bare Python loop", "single process", "single process, streamparse-style",
            "heron", "heron, streamparse-style", "heron, pure Python",
            "heron, streamparse-style, pure Python", "storm", "storm, streamparse-style"]
ALO_RUNS = ["heron (at-least-once)", "heron (at-least-once), pure Python",
            "storm (at-least-once)"]


def require_compiled() -> None:
    """The bench's compiled heron runs need a usable build: skip without one, fail under
    HERON_REQUIRE_COMPILED=1 (the suite's setting), as tests/engine/codec do."""
    if compiled_available():
        return
    if os.environ.get("HERON_REQUIRE_COMPILED", "").strip().lower() in {"1", "true", "yes", "on"}:
        pytest.fail("HERON_REQUIRE_COMPILED=1 but the compiled tuple path is not usable here")
    pytest.skip("no usable compiled tuple path here")


def processes_naming(path: Path) -> list[str]:
    """Live processes whose command line names ``path`` (heron processes are started with
    ``--launch <work dir>/launch.json``), whoever their parent is now."""
    needle = str(path.resolve())
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if (needle in " ".join(proc.info["cmdline"] or ())
                    and proc.status() != psutil.STATUS_ZOMBIE):
                found.append(f"{proc.pid}: {' '.join(proc.info['cmdline'])[:200]}")
        except psutil.Error:
            continue
    return found


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_every_mode_in_the_tables_and_in_json(tmp_path, capsys, isolated_imports):
    """Both engines at-most-once and at-least-once, both word counts, heron on both tuple
    paths, the ceilings, and the backpressure scenario, on tiny sizes, in one run: the
    tables and summary lines (stdout) and the same figures as JSON (``--json-file``):
    every figure is there, every heron run ran the tuple path asked for, and the counts
    agree."""
    require_compiled()
    words, alo_storm_words, workers, bp_seconds = 20_000, 5_000, 2, 6
    work, figures = tmp_path / "bench", tmp_path / "figures.json"
    code = main(["--words", str(words), "--workers", str(workers), "--json-file", str(figures),
                 "--alo-storm-words", str(alo_storm_words), "--backpressure", str(bp_seconds),
                 "--work-dir", str(work)])
    text = capsys.readouterr().out
    report = json.loads(figures.read_text())
    assert code == 0, text
    check_the_text(text)
    assert report["counts_match"] is True, report["counts_detail"]
    assert (report["words"], report["workers"], report["engines"]) == (words, workers,
                                                                       ["heron", "storm"])
    assert report["reliability"] == ["at-most-once", "at-least-once"]
    assert (report["variants"], report["paths"]) == (["heron", "streamparse"],
                                                     ["compiled", "pure"])

    # -- at-most-once
    runs = report["runs"]
    assert list(runs) == AMO_RUNS
    distinct = {run["distinct_words"] for run in runs.values()}
    assert len(distinct) == 1 and 0 < distinct.pop() <= report["vocabulary"]
    for name in AMO_RUNS[1:]:
        run = runs[name]
        assert run["variant"] == ("streamparse" if "streamparse" in name else "heron"), name
        if name.startswith("heron"):
            # the path asked for, as every heron process's first log line says
            expected = "pure Python" if "pure" in name else "compiled"
            assert (run["path"], run["tuple_path"]) == (
                "pure" if "pure" in name else "compiled", expected), run
        assert run["over_bare_loop"] == pytest.approx(
            run["tuples_per_second"] / runs["bare Python loop"]["tuples_per_second"])
        assert (run["reason"], run["error"], run["keys_dropped"]) == ("finished", None, 0), run
        assert run["counted"] == words and run["reliability"] == "at-most-once"
        assert run["tuples_per_second"] > 0 and run["window_seconds"] > 0
        # the spout stamps its first word and every 100th after it
        assert run["latency_samples"] == math.ceil(words / report["sample_every"])
        latency = run["latency_ms"]
        assert set(latency) == {"p50", "p95", "p99", "max"}
        assert 0 <= latency["p50"] <= latency["p95"] <= latency["p99"] <= latency["max"]
        assert run["complete_latency_ms"] == {} and run["complete_samples"] == 0
    # the goal is judged against the bare loop (the design's single-process limit); the
    # component-API loop is context
    assert report["heron_over_bare_loop"] == pytest.approx(
        runs["heron"]["tuples_per_second"] / runs["bare Python loop"]["tuples_per_second"])
    assert report["heron_over_api_loop"] == pytest.approx(
        runs["heron"]["tuples_per_second"] / runs["single process"]["tuples_per_second"])
    assert report["goal_met"] == (report["heron_over_bare_loop"] >= report["goal_ratio"])
    assert report["streamparse_over_bare_loop"] == runs["heron, streamparse-style"][
        "over_bare_loop"]
    # the goals, judged on the compiled runs, each a ratio within this run
    goals = {g["goal"]: g for g in report["goals"]}
    assert list(goals) == ["Heron's word count at-most-once", "streamparse-style at-most-once",
                           "at-least-once", "flooded at-most-once latency"]
    assert report["goal_path"] == "compiled"
    head, sp = goals["Heron's word count at-most-once"], goals["streamparse-style at-most-once"]
    assert (head["run"], head["target"]) == ("heron", GOAL_RATIO)
    assert head["value"] == report["heron_over_bare_loop"]
    assert head["met"] == (head["value"] >= GOAL_RATIO)
    assert (sp["run"], sp["target"]) == ("heron, streamparse-style", GOAL_STREAMPARSE_RATIO)
    assert sp["met"] == (sp["value"] >= GOAL_STREAMPARSE_RATIO)
    alo_goal = goals["at-least-once"]
    assert (alo_goal["run"], alo_goal["target"], alo_goal["max_pending"]) == (
        "heron (at-least-once)", GOAL_ALO_RATIO, DEFAULT_MAX_PENDING)
    assert alo_goal["met"] == (alo_goal["value"] >= GOAL_ALO_RATIO
                               and alo_goal["p99_complete_ms"] < GOAL_COMPLETE_P99_MS)
    flood = goals["flooded at-most-once latency"]
    assert flood["value"] == runs["heron"]["latency_ms"]["p99"]
    assert flood["met"] == (flood["value"] < GOAL_FLOOD_P99_MS)
    # the compiled path's gain over pure Python, per word count
    gains = report["compiled_over_pure"]
    assert list(gains) == ["Heron's word count", "streamparse-style", "at-least-once"]
    assert gains["Heron's word count"]["ratio"] == pytest.approx(
        runs["heron"]["tuples_per_second"] / runs["heron, pure Python"]["tuples_per_second"])
    assert set(report["heron_processes_by_run"]) == {
        *(n for n in AMO_RUNS if n.startswith("heron")), *ALO_RUNS[:2]}
    kinds = {k["kind"]: k for k in report["heron_processes"]}
    assert set(kinds) == HERON_KINDS
    assert kinds["Topology Master"]["processes"] == 1
    assert kinds["Stream Manager"]["processes"] == workers
    assert kinds["Metrics Manager"]["processes"] == workers
    assert kinds["executor"]["processes"] == workers + 1  # container 0 holds the TM
    assert kinds["instance: count_bolt"]["processes"] == 2
    for kind in kinds.values():
        assert 0 < kind["peak_rss_mb"] <= kind["total_peak_rss_mb"], kind

    # -- at-least-once: exact counts (no failures), complete latency from the spout
    alo = report["at_least_once"]
    assert alo["counts_match"] is True, alo["counts_detail"]
    assert alo["max_pending"] == DEFAULT_MAX_PENDING and alo["storm_words"] == alo_storm_words
    assert list(alo["runs"]) == ALO_RUNS
    for name, n in zip(ALO_RUNS, (words, words, alo_storm_words)):
        run = alo["runs"][name]
        assert (run["reason"], run["error"], run["keys_dropped"]) == ("finished", None, 0), run
        assert run["reliability"] == "at-least-once"
        assert run["counted"] == run["words"] == n
        assert run["tuples_per_second"] > 0 and run["window_seconds"] > 0
        # every word's tree was acked, none failed; one complete-latency sample per stamp
        assert (run["acked"], run["failed"]) == (n, 0), run
        assert run["complete_samples"] == math.ceil(n / 100)
        complete = run["complete_latency_ms"]
        assert set(complete) == {"p50", "p95", "p99", "max"}
        assert 0 < complete["p50"] <= complete["p95"] <= complete["p99"] <= complete["max"]
    assert alo["heron_over_at_most_once"] == pytest.approx(
        alo["runs"]["heron (at-least-once)"]["tuples_per_second"]
        / runs["heron"]["tuples_per_second"])
    pure_alo = alo["runs"]["heron (at-least-once), pure Python"]
    assert pure_alo["tuple_path"] == "pure Python"
    assert pure_alo["over_at_most_once"] == pytest.approx(
        pure_alo["tuples_per_second"] / runs["heron, pure Python"]["tuples_per_second"])
    assert alo["goal_met"] in (True, False)
    assert {k["kind"] for k in alo["heron_processes"]} == HERON_KINDS

    # -- backpressure: the spout follows the slow bolt, the queues stay bounded
    bp = report["backpressure"]
    assert (bp["reason"], bp["error"]) == ("finished", None), bp
    assert bp["seconds"] >= bp_seconds and bp["bolt_cost_us"] == DEFAULT_BOLT_COST_US
    assert bp["high_watermark_mb"] == DEFAULT_BP_HIGH_MB
    assert 0 < bp["executed"] <= bp["emitted"]
    windows = [r["window"] for r in bp["rates"]]
    assert windows == ["first third", "middle third", "last third", "steady"], bp["rates"]
    steady = bp["rates"][-1]
    assert steady["bolt_per_second"] > 0
    assert 0 <= bp["first_pause"] < bp["seconds"]
    # no timing assertions, but a spout that were not held back would emit several
    # hundred thousand words a second against the bolts' 20,000 at most
    assert steady["spout_per_second"] <= 5 * steady["bolt_per_second"], bp["rates"]
    assert bp["emitted"] <= 10 * bp["executed"], (bp["emitted"], bp["executed"])
    assert len(bp["stmgrs"]) == workers
    high = bp["high_watermark_mb"] * 2**20
    for manager in bp["stmgrs"]:
        assert manager["spouts_paused_ms"] > 0, manager
        assert 0 <= manager["paused_in_run_ms"] <= manager["spouts_paused_ms"], manager
        # at most the watermark plus the message in hand (a batch of 1,024 words)
        assert 0 < manager["largest_queue_bytes_max"] <= high + 64 * 1024, manager
    assert [w["window"] for w in bp["rss_windows"]] == ["first third", "middle third",
                                                        "last third"]
    for window in bp["rss_windows"]:
        assert set(window["kinds"]) == HERON_KINDS, window
        for kind in window["kinds"].values():
            assert 0 < kind["peak_rss_mb"] <= kind["total_peak_rss_mb"]
    assert {k["kind"] for k in bp["processes"]} == HERON_KINDS

    # a clean run given --work-dir keeps the logs there, and leaves no process behind
    assert report["work_dir"] == str(work)
    for run_dir in ("heron", "heron-streamparse", "heron-pure", "heron-streamparse-pure",
                    "heron-alo", "heron-alo-pure", "heron-backpressure"):
        assert (work / run_dir / "logs").is_dir(), run_dir
    assert processes_naming(work) == []


def check_the_text(stdout: str) -> None:
    """The tables and summary lines of a full run (both engines, both word counts, both
    tuple paths, at-least-once, backpressure)."""
    for header in ("tuples/s", "x bare loop", "x API loop", "window s", "latency p50 ms",
                   "p95 ms", "p99 ms", "peak RSS MB (largest)", "CPU s", "CPU µs/word",
                   "message ids, acks", "topology.max.spout.pending",
                   "x at-most-once", "complete p50 ms", "failed",
                   "CPU µs per word", "at-most-once, pure Python", "at-least-once, pure Python",
                   "backpressure (heron, at-most-once)",
                   "word_spout emitted/s", "count_bolt executed/s", "last two thirds",
                   "spouts paused s", "largest queue max MB", "first third", "last third"):
        assert header in stdout, (header, stdout)
    for row in ("bare Python loop", "single process", "heron", "storm", *HERON_KINDS):
        assert row in stdout, (row, stdout)
    # the summary lines wrap at the console's width: compare them with spaces collapsed
    flat = " ".join(stdout.split())
    assert ("✓ counts: " + " = ".join(AMO_RUNS)) in flat, stdout
    assert "= heron (at-least-once) = heron (at-least-once), pure Python" in flat, stdout
    for line in ("goals (issue 20), on the compiled tuple path",
                 "Heron's word count at-most-once [heron]:", "the slowest); goal >= 0.5x:",
                 "streamparse-style at-most-once [heron, streamparse-style]:",
                 "the slowest); goal >= 0.35x:",
                 "at-least-once [heron (at-least-once)]:", "at max spout pending 1,024",
                 "goal >= 0.5x with p99 < 50 ms:",
                 "flooded at-most-once latency [heron, the spout floods]: p99 emit-to-count",
                 "compiled tuple path against pure Python", "Heron's word count",
                 "tuple path, from the first log line of each heron process: heron: compiled; "
                 "heron, streamparse-style: compiled; heron, pure Python: pure Python",
                 "the single-process limit (a bare loop picking and counting words",
                 "through the Storm component API", "heron at-least-once counts",
                 "over the last two thirds the spout emitted"):
        assert line in flat, (line, stdout)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_script_runs_from_a_checkout(tmp_path):
    """``python bench/wordcount.py`` as a script (its own sys.path, the exit status, no
    process left behind), on one small heron run of Heron's word count on the pure-Python
    path: the full report is checked above, in process."""
    work = tmp_path / "bench"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--words", "3000", "--backpressure", "0",
         "--engines", "heron", "--reliability", "at-most-once", "--variants", "heron",
         "--paths", "pure", "--work-dir", str(work)],
        capture_output=True, text=True, timeout=110, cwd=tmp_path, check=False,
        env={**os.environ, "COLUMNS": "160"})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    flat = " ".join(proc.stdout.split())
    assert "heron runs on the tuple path(s): pure Python" in flat, output
    assert "✓ counts: bare Python loop = single process = heron, pure Python" in flat, output
    assert "goals (issue 20), on the pure Python tuple path" in flat, output
    assert processes_naming(work) == []


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_at_least_once_alone_on_heron(tmp_path, capsys, isolated_imports):
    """``--reliability at-least-once``: no ceiling and no at-most-once engine runs, the
    bare loop is the oracle, and the figures say what max spout pending was used. On the
    pure-Python tuple path alone (``--paths pure``), which needs no build."""
    words = 10_000
    code = main(["--words", str(words), "--engines", "heron", "--reliability",
                 "at-least-once", "--max-pending", "64", "--backpressure", "0", "--json",
                 "--paths", "pure", "--work-dir", str(tmp_path / "bench")])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, json.dumps(report, indent=2)
    assert list(report["runs"]) == ["bare Python loop"]
    assert report["heron_processes"] == [] and report["backpressure"] is None
    alo = report["at_least_once"]
    assert alo["max_pending"] == 64 and alo["heron_over_at_most_once"] is None
    assert list(alo["runs"]) == ["heron (at-least-once), pure Python"]
    run = alo["runs"]["heron (at-least-once), pure Python"]
    assert (run["counted"], run["acked"], run["failed"]) == (words, words, 0)
    assert (run["path"], run["tuple_path"]) == ("pure", "pure Python")
    assert report["counts_match"] is True
    assert ("bare Python loop = heron (at-least-once), pure Python"
            in report["counts_detail"])
    # judged on the only path that ran; with no at-most-once run, no ratio to judge
    assert report["goal_path"] == "pure"
    assert [(g["goal"], g["met"]) for g in report["goals"]] == [("at-least-once", None)]


def figures(run: str, counts: dict[str, int], reason: str = "finished") -> RunFigures:
    total = sum(counts.values())
    return RunFigures(run=run, reason=reason, words=total, counted=total, wall_seconds=1.0,
                      window_seconds=1.0, tuples_per_second=float(total), counts=counts)


def test_the_count_check_names_what_differs():
    a = figures("storm", {"dog": 2, "cat": 1})
    assert check_counts([a, figures("heron", {"dog": 2, "cat": 1})], 3).ok
    swapped = check_counts([a, figures("heron", {"dog": 1, "cat": 2})], 3)
    assert not swapped.ok
    assert "heron and storm differ on 2 words" in swapped.detail
    assert "'cat': storm 1 vs heron 2" in swapped.detail
    short = check_counts([a, figures("heron", {"dog": 2})], 3)
    assert not short.ok and "heron counted 2 words" in short.detail
    stopped = check_counts([a, figures("heron", {"dog": 2, "cat": 1}, reason="time limit")], 3)
    assert not stopped.ok and "heron did not finish (time limit" in stopped.detail
    dropped = figures("heron", {"dog": 2, "cat": 1})
    dropped.keys_dropped = 5
    assert "dropped 5 keys" in check_counts([a, dropped], 3).detail


def test_process_kinds_follow_the_engines_pid_file_names():
    assert process_kind("heron-tmanager") == "Topology Master"
    assert process_kind("stmgr-2") == "Stream Manager"
    assert process_kind("metricsmgr-1") == "Metrics Manager"
    assert process_kind("executor-0") == "executor"
    assert process_kind("container_1_count_bolt_3") == "instance: count_bolt"
    assert process_kind("container_12_word_spout_1") == "instance: word_spout"


def test_latency_percentiles_are_nearest_rank_in_milliseconds():
    nanos = [i * 1_000_000 for i in range(1, 101)]  # 1..100 ms
    assert latency_figures(nanos) == {"p50": 50.0, "p95": 95.0, "p99": 99.0, "max": 100.0}
    assert latency_figures([]) == {}
    assert percentile([7.0], 0.99) == 7.0
    assert math.isnan(percentile([], 0.5))


def test_bad_arguments_are_refused_with_a_message(capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(["--engines", "heron,flink"])
    assert exc.value.code == 2
    assert "unknown engine(s) flink; choose from heron, storm" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--words", "0"])
    assert parse_args(["--quick"]).words == 100_000
    assert parse_args(["--engines", "storm,heron"]).engines == ["heron", "storm"]
    assert parse_args(["--variants", "streamparse,heron"]).variants == ["heron", "streamparse"]
    assert parse_args(["--paths", "pure,compiled"]).paths == ["compiled", "pure"]
    capsys.readouterr()
    with pytest.raises(SystemExit):
        parse_args(["--variants", "spark"])
    assert "unknown variant(s) spark; choose from heron, streamparse" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--paths", "rust"])
    assert "unknown tuple path(s) rust; choose from compiled, pure" in capsys.readouterr().err


def test_count_checks_over_several_word_counts():
    a, b = figures("bare", {"dog": 2, "cat": 1}), figures("heron", {"dog": 2, "cat": 1})
    small, storm = figures("bare", {"dog": 1}), figures("storm", {"dog": 1})
    both = check_groups([([a, b], 3), ([small, storm], 1)])
    assert both.ok and "bare = heron" in both.detail and "bare = storm" in both.detail
    wrong = check_groups([([a, b], 3), ([small, figures("storm", {"cat": 1})], 1)])
    assert not wrong.ok and "storm and bare differ on 2 words" in wrong.detail
    assert "bare = heron" not in wrong.detail  # only what failed is named
    assert not check_groups([([a], 3)]).ok  # nothing to compare


def test_window_rates_interpolate_between_metric_polls():
    # (time, spout emitted, bolt executed): the spout stops at t=2, the bolt keeps going
    polls = [(0.0, 0, 0), (1.0, 100, 10), (2.0, 200, 20), (4.0, 200, 40)]
    first = window_rates(polls, 0.0, 2.0)
    assert first == {"spout_per_second": 100.0, "bolt_per_second": 10.0, "in_flight": 180}
    assert window_rates(polls, 0.5, 1.5)["spout_per_second"] == pytest.approx(100.0)
    late = window_rates(polls, 2.0, 4.0)
    assert late == {"spout_per_second": 0.0, "bolt_per_second": 10.0, "in_flight": 160}
    # outside the polls: the nearest poll's value
    assert window_rates(polls, 4.0, 9.0)["bolt_per_second"] == 0.0


def test_rss_windows_take_each_process_peak_inside_the_window(tmp_path):
    sampler = ProcessSampler(tmp_path, series=True)
    mb = 2**20
    sampler.series = [(0.5, "stmgr-1", 10, 30 * mb), (1.5, "stmgr-1", 10, 40 * mb),
                      (1.6, "stmgr-2", 11, 35 * mb), (2.5, "stmgr-1", 10, 31 * mb),
                      (1.7, "container_1_count_bolt_2", 12, 50 * mb)]
    first = sampler.window_figures(0.0, 1.0)
    assert first == {"Stream Manager": {"processes": 1, "peak_rss_mb": 30.0,
                                        "total_peak_rss_mb": 30.0}}
    second = sampler.window_figures(1.0, 2.0)
    assert list(second) == ["Stream Manager", "instance: count_bolt"]
    assert second["Stream Manager"] == {"processes": 2, "peak_rss_mb": 40.0,
                                        "total_peak_rss_mb": 75.0}
    assert ProcessSampler(tmp_path).window_figures(0.0, 9.0) == {}  # no series kept


def test_new_arguments_and_their_defaults(capsys):
    args = parse_args([])
    assert args.reliability == ["at-most-once", "at-least-once"]
    assert (args.variants, args.paths, args.paths_given) == (["heron", "streamparse"],
                                                             ["compiled", "pure"], False)
    assert (args.max_pending, args.backpressure) == (DEFAULT_MAX_PENDING, 20.0)
    assert args.alo_storm_words == args.words // 5
    quick = parse_args(["--quick"])
    assert (quick.words, quick.backpressure, quick.alo_storm_words) == (100_000, 6.0, 20_000)
    assert parse_args(["--reliability", "at-least-once"]).reliability == ["at-least-once"]
    assert parse_args(["--engines", "storm"]).backpressure == 0.0  # a heron scenario
    for bad in (["--max-pending", "0"], ["--backpressure", "-1"], ["--bolt-cost-us", "0"],
                ["--reliability", "exactly-once"], ["--watermark-mb", "0"]):
        with pytest.raises(SystemExit):
            parse_args(bad)
    capsys.readouterr()


def test_both_word_counts_in_one_process_count_what_the_bare_loop_counts(isolated_imports):
    """Heron's word count (final counts at the end of the stream) and the streamparse-
    style one, through the component API with no engine: the same counts as the bare
    loop, and the end-of-stream marker is not counted as a word."""
    words = 5_000
    options = bench_options(words, 3)
    heron, streamparse = (load(options, 2, topology) for topology in (TOPOLOGY_HERON, TOPOLOGY))
    assert (end_markers(heron), end_markers(streamparse)) == (2, 0)  # 1 spout x 2 bolt tasks
    assert (variant_of(heron), variant_of(streamparse)) == ("heron", "streamparse")
    bare = run_bare_loop(heron, words, 3)
    for loaded, name in ((heron, "single process"),
                         (streamparse, "single process, streamparse-style")):
        run = run_ceiling(loaded, words, name=name)
        assert (run.run, run.counted, run.variant) == (name, words, variant_of(loaded))
        assert run.counts == bare.counts


def test_heron_word_count_emits_final_counts_at_the_end_and_late_words_at_once(
        isolated_imports):
    from compat.storm_api.hosting import host_component
    from engine.common.runtime.layout import build_context

    loaded = load(bench_options(10, 3), 2, TOPOLOGY_HERON)
    layout, conf = local_hosting(loaded)
    sink = _BoltSink()
    task = layout.tasks_by_component["count_bolt"][0]
    spout_task = layout.tasks_by_component["word_spout"][0]
    bolt = host_component(loaded.compiled.component_classes["count_bolt"], conf("count_bolt"),
                          build_context(loaded.plan, layout, "count_bolt", task), sink,
                          logging.getLogger("test"))

    def send(stream: str, values: list) -> None:
        bolt.execute(bolt.make_tuple(None, "word_spout", stream, spout_task, values))

    for word in ("dog", "cat", "dog"):
        send("default", [word, 0])
    assert sink.default == {}  # nothing per word
    send("eos", ["<end of stream>", -1])
    assert sink.default == {("dog",): 2, ("cat",): 1}
    send("default", ["dog", 0])  # only a reordering engine could deliver one: counted
    assert sink.default == {("dog",): 3, ("cat",): 1}
    send("eos", ["<end of stream>", -1])  # a repeated marker emits nothing again
    assert sink.count == 3


def test_goals_are_judged_on_the_runs_of_one_path():
    def run(name, engine, variant, path, rate, p99=None, reliability="at-most-once"):
        figures = RunFigures(run=name, reason="finished", words=1, counted=1, wall_seconds=1,
                             window_seconds=1, tuples_per_second=rate, engine=engine,
                             variant=variant, path=path, reliability=reliability)
        if p99 is not None:
            key = "complete_latency_ms" if reliability == "at-least-once" else "latency_ms"
            setattr(figures, key, {"p99": p99})
        return figures

    runs = [run("bare Python loop", "bare loop", None, None, 1000),
            run("heron", "heron", "heron", "compiled", 600, p99=150.0),
            run("heron, streamparse-style", "heron", "streamparse", "compiled", 300),
            run("heron, pure Python", "heron", "heron", "pure", 200, p99=20.0)]
    alo = [run("heron (at-least-once)", "heron", "heron", "compiled", 310, p99=40.0,
               reliability="at-least-once")]
    goals = {g["goal"]: g for g in evaluate_goals(runs, alo, "compiled", False, 1024)}
    assert goals["Heron's word count at-most-once"]["value"] == 0.6
    assert goals["Heron's word count at-most-once"]["met"] is True
    assert goals["streamparse-style at-most-once"]["met"] is False  # 0.3 < 0.35
    assert goals["at-least-once"]["value"] == pytest.approx(310 / 600)
    assert goals["at-least-once"]["met"] is True
    assert goals["flooded at-most-once latency"]["met"] is False  # 150 ms
    assert "0.60x the bare loop; goal >= 0.5x" in goal_text(
        goals["Heron's word count at-most-once"])
    # on the pure path: its own runs; --rate: nothing is judged
    pure = evaluate_goals(runs, alo, "pure", False, 1024)
    assert [(g["run"], g["met"]) for g in pure] == [("heron, pure Python", False),
                                                   ("heron, pure Python", True)]
    assert all(g["met"] is None for g in evaluate_goals(runs, alo, "compiled", True, 1024))
