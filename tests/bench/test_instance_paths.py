"""bench/instance_paths.py on a few thousand words: every word goes through the spout,
Stream Manager and bolt paths (and back as an ack at-least-once), each path's cost is
reported, and nothing is asserted about speed."""

from __future__ import annotations

import json

from bench.instance_paths import main


def test_every_word_goes_through_every_path_and_each_is_reported(capsys):
    assert main(["--tuples", "3000", "--json", "--max-pending", "256"]) == 0
    runs = {run["reliability"]: run for run in json.loads(capsys.readouterr().out)["runs"]}
    assert set(runs) == {"at-most-once", "at-least-once"}
    assert all(run["words"] == run["counted"] == 3000 for run in runs.values())
    assert set(runs["at-most-once"]["us_per_word"]) == {
        "spout emit", "Stream Manager routing", "bolt execute"}
    assert set(runs["at-least-once"]["us_per_word"]) == {
        "spout emit", "Stream Manager tracking", "bolt execute", "Stream Manager acks",
        "spout acks"}
    for run in runs.values():
        assert all(us > 0 for us in run["us_per_word"].values())
        assert abs(run["total_us_per_word"] - sum(run["us_per_word"].values())) < 0.01


def test_bad_arguments_are_refused(capsys):
    import pytest

    with pytest.raises(SystemExit) as exit_info:
        main(["--tuples", "0"])
    assert exit_info.value.code == 2
    assert "--tuples" in capsys.readouterr().err


def test_the_floor_times_each_unavoidable_step_against_the_goals_budget(capsys):
    assert main(["--tuples", "3000", "--json", "--reliability", "at-most-once", "--floor"]) == 0
    out = json.loads(capsys.readouterr().out)
    floor = out["floor"]
    assert floor["words"] == 3000 and floor["cpus"] >= 1
    steps = floor["us_per_word"]
    assert list(steps)[0].startswith("pick the word") and len(steps) == 8
    assert all(us > 0 for us in steps.values())
    assert abs(floor["total_us_per_word"] - sum(steps.values())) < 0.01
    # the budget is what 0.5x the bare loop leaves per word on this many cores
    budget = floor["cpus"] / (0.5 * floor["bare_loop_words_per_second"]) * 1e6
    assert abs(floor["budget_us_per_word_for_half_the_bare_loop"] - budget) < 0.01 * budget


def test_the_floor_is_only_measured_when_asked_for(capsys):
    assert main(["--tuples", "2000", "--json", "--reliability", "at-most-once"]) == 0
    assert "floor" not in json.loads(capsys.readouterr().out)
