"""The word-count benchmark (bench/wordcount.py) on tiny settings: it completes, reports
every figure (throughput, latency percentiles, peak RSS per heron process kind), the
engines' counts agree, and no process outlives it. Nothing here asserts on speed:
timings depend on the machine and on what else runs on it."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from bench.wordcount import (
    RunFigures,
    check_counts,
    latency_figures,
    main,
    parse_args,
    percentile,
    process_kind,
)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "wordcount.py"
HERON_KINDS = {"Topology Master", "Stream Manager", "Metrics Manager", "executor",
               "instance: count_bolt", "instance: word_spout"}


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
@pytest.mark.timeout(300)
def test_json_figures_for_both_engines_and_the_ceiling(tmp_path, capsys, isolated_imports):
    words, workers = 20_000, 2
    work = tmp_path / "bench"
    code = main(["--words", str(words), "--workers", str(workers), "--json",
                 "--work-dir", str(work)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, json.dumps(report, indent=2)
    assert report["counts_match"] is True, report["counts_detail"]
    assert (report["words"], report["workers"], report["engines"]) == (words, workers,
                                                                       ["heron", "storm"])
    runs = report["runs"]
    assert list(runs) == ["bare Python loop", "single process", "heron", "storm"]
    distinct = {run["distinct_words"] for run in runs.values()}
    assert len(distinct) == 1 and 0 < distinct.pop() <= report["vocabulary"]
    for name in ("single process", "heron", "storm"):
        run = runs[name]
        assert (run["reason"], run["error"], run["keys_dropped"]) == ("finished", None, 0), run
        assert run["counted"] == words
        assert run["tuples_per_second"] > 0 and run["window_seconds"] > 0
        # the spout stamps its first word and every 100th after it
        assert run["latency_samples"] == math.ceil(words / report["sample_every"])
        latency = run["latency_ms"]
        assert set(latency) == {"p50", "p95", "p99", "max"}
        assert 0 <= latency["p50"] <= latency["p95"] <= latency["p99"] <= latency["max"]
    assert report["heron_over_ceiling"] == pytest.approx(
        runs["heron"]["tuples_per_second"] / runs["single process"]["tuples_per_second"])
    kinds = {k["kind"]: k for k in report["heron_processes"]}
    assert set(kinds) == HERON_KINDS
    assert kinds["Topology Master"]["processes"] == 1
    assert kinds["Stream Manager"]["processes"] == workers
    assert kinds["Metrics Manager"]["processes"] == workers
    assert kinds["executor"]["processes"] == workers + 1  # container 0 holds the TM
    assert kinds["instance: count_bolt"]["processes"] == 2
    for kind in kinds.values():
        assert 0 < kind["peak_rss_mb"] <= kind["total_peak_rss_mb"], kind
    # a clean run given --work-dir keeps the logs there, and leaves no process behind
    assert report["work_dir"] == str(work) and (work / "heron" / "logs").is_dir()
    assert processes_naming(work) == []


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_the_script_prints_the_tables_and_the_count_check(tmp_path):
    work = tmp_path / "bench"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--words", "5000", "--work-dir", str(work)],
        capture_output=True, text=True, timeout=220, cwd=tmp_path, check=False,
        env={**os.environ, "COLUMNS": "160"})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    for header in ("tuples/s", "x ceiling", "window s", "latency p50 ms", "p95 ms", "p99 ms",
                   "peak RSS MB (largest)", "CPU s"):
        assert header in proc.stdout, (header, output)
    for row in ("bare Python loop", "single process", "heron", "storm", *HERON_KINDS):
        assert row in proc.stdout, (row, output)
    assert "✓ counts: bare Python loop = single process = heron = storm" in proc.stdout, output
    assert "the single-process ceiling" in proc.stdout
    assert processes_naming(work) == []


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
