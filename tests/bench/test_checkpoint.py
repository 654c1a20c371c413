"""The checkpoint benchmark (bench/checkpoint.py): its goals and arguments on their own,
and a very short run that must report every figure (each reliability mode's words/s
and CPU per word, checkpoint duration and bytes per state size, the recovery after a
``kill -9``) and leave no process behind. Nothing here asserts on speed: timings depend
on the machine and on what else runs on it."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.checkpoint import GOAL_KEYS, evaluate_goals, parse_args
from bench.checkpoint_runs import ModeFigures, SizeFigures, stop_leftovers

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "checkpoint.py"


def _mode(reliability: str, words_per_s: float, interval: float | None = None) -> ModeFigures:
    name = reliability if interval is None else f"{reliability}, every {interval:g} s"
    return ModeFigures(mode=name, reliability=reliability, interval_s=interval,
                       words_per_s=words_per_s, cpu_s_per_million=5.0, window_s=20.0,
                       words=int(words_per_s * 20), cpu_s=1.0, processes=11)


def test_goals_compare_each_interval_with_at_least_once_and_the_million_key_checkpoint():
    modes = [_mode("at-most-once", 300.0), _mode("at-least-once", 100.0),
             _mode("effectively-once", 90.0, 1), _mode("effectively-once", 150.0, 5)]
    sizes = [SizeFigures(keys=GOAL_KEYS, checkpoint_ms=2500, checkpoint_bytes=1, task_save_ms=1,
                         task_bytes=1, task_rss_mb=1)]
    goals = evaluate_goals(modes, sizes)
    assert [g["met"] for g in goals] == [False, True, False]
    assert goals[0]["figure"] == "0.90x at-least-once" and "every 1 s" in goals[0]["goal"]
    unmeasured = evaluate_goals([_mode("effectively-once", 1.0, 1)], [])
    assert [g["met"] for g in unmeasured] == [None, None]


def test_arguments():
    args = parse_args(["--intervals", "2,10", "--keys", "5,6", "--skip", "kill"])
    assert args.intervals == [2.0, 10.0] and args.keys == [5, 6] and args.skip == ["kill"]
    defaults = parse_args([])
    assert defaults.keys == [10_000, 1_000_000, 5_000_000]
    assert (defaults.size_interval, defaults.kill_interval, defaults.warmup) == (2.0, 1.0, 3.0)
    assert parse_args(["--size-interval", "0.5"]).size_interval == 0.5
    with pytest.raises(SystemExit):
        parse_args(["--skip", "nothing"])
    with pytest.raises(SystemExit):
        parse_args(["--duration", "0"])
    with pytest.raises(SystemExit):
        parse_args(["--size-interval", "0"])


@pytest.mark.slow
@pytest.mark.timeout(330)
def test_a_short_run_reports_every_figure_and_leaves_no_process(tmp_path):
    work, report = tmp_path / "runs", tmp_path / "figures.json"
    try:
        proc = subprocess.run(
            # short: no warmup, checkpoints every 0.5 s in the state-size and kill runs
            [sys.executable, str(SCRIPT), "--duration", "2", "--warmup", "0",
             "--keys", "1000,20000", "--checkpoints", "1", "--size-interval", "0.5",
             "--kill-interval", "0.5", "--kill-settle", "2",
             "--rescale-keys", "20000", "--churn-keys", "20000", "--churn", "0.01,0.1",
             "--work-dir", str(work), "--json", str(report)],
            capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False,
            env={**os.environ, "COLUMNS": "160"})
    finally:
        left = stop_leftovers(work, timeout=5) if work.exists() else []
    output = proc.stdout + proc.stderr
    assert left == [], f"processes left: {left}\n{output}"
    assert proc.returncode == 0, output
    figures = json.loads(report.read_text())
    assert figures["ok"] and not figures["errors"], figures["errors"]

    modes = {m["mode"]: m for m in figures["modes"]}
    assert set(modes) == {"at-most-once", "at-least-once", "effectively-once, every 1 s",
                          "effectively-once, every 5 s", "effectively-once, every 30 s"}
    for m in modes.values():
        assert m["words"] > 0 and m["words_per_s"] > 0, m
        assert m["cpu_s_per_million"] > 0 and math.isfinite(m["cpu_s_per_million"]), m
    assert modes["effectively-once, every 1 s"]["checkpoints"] >= 1

    sizes = {s["keys"]: s for s in figures["sizes"]}
    assert set(sizes) == {1000, 20000}
    for s in sizes.values():
        assert s["checkpoint_ms"] > 0 and s["task_save_ms"] > 0, s
        assert s["task_bytes"] > 0 and s["checkpoint_bytes"] >= s["task_bytes"], s
        assert {"gather_ms", "dumps_ms", "encode_ms", "store_ms", "load_ms",
                "decode_ms"} <= set(s["direct"]), s
    assert sizes[20000]["task_bytes"] > sizes[1000]["task_bytes"]

    kill = figures["kill"]
    assert 0 < kill["restore_seen_s"] and 0 < kill["first_word_s"], kill
    assert kill["metrics_counting_s"] >= kill["restore_seen_s"], kill
    assert kill["restore_last_ms"] > 0 and kill["task_restore_ms"] is not None, kill
    assert kill["restored_keys"] > 0 and kill["restored_words"] > 0, kill  # state restored
    assert kill["restored_checkpoint"] not in ("", "empty"), kill

    assert [g["met"] is not None for g in figures["goals"]] == [True, True, True, False]

    (rescaled,) = figures["rescale"]
    assert rescaled["keys"] == 20000
    assert [(s["before"], s["after"]) for s in rescaled["steps"]] == [(1, 4), (4, 2)]
    assert all(s["restore_secs"] > 0 for s in rescaled["steps"])
    churns = {c["churn"]: c for c in figures["churn"]}
    assert set(churns) == {0.01, 0.1}
    # incremental checkpoints write less than full ones, and more at more churn
    assert churns[0.01]["incremental_bytes"] < churns[0.1]["incremental_bytes"] \
        < churns[0.1]["full_bytes"]

    flat = " ".join(proc.stdout.split())
    for text in ("words/s and CPU per word, by reliability mode", "effectively-once, every 30 s",
                 "Checkpoint of one counting task pre-filled with N keys", "20,000",
                 "kill -9 of a counting bolt instance", "kill -> killed task counts again",
                 "__restore-last-ms", "Goals (issue 29)",
                 "a 1,000,000-key checkpoint under 2 s: - not measured"):
        assert text in flat, (text, output)
