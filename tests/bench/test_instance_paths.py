"""bench/instance_paths.py on a few thousand words: every word goes through the spout,
Stream Manager and bolt paths (and back as an ack at-least-once), each path's cost is
reported, and nothing is asserted about speed."""

from __future__ import annotations

import json

import pytest

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


# -- the API overhead section (issue 31) ---------------------------------------------------

def test_the_api_overhead_beside_the_reference_loop_in_one_run(capsys):
    """Ours (the engine path minus the floor's non-API steps, and the same classes with
    no engine minus the fused loop) beside the reference loop's plain and named
    overheads, with the goal's ratios; every word counted. No figure is judged."""
    from bench.api_overhead import API_GOAL_OVER_PLAIN, NON_API_STEPS

    assert main(["--tuples", "2000", "--json", "--reliability", "at-most-once",
                 "--rounds", "2"]) == 0
    api = json.loads(capsys.readouterr().out)["api_overhead"]
    assert (api["words"], api["rounds"], api["statistic"]) == (2000, 2, "best")
    assert api["counts_match"] is True and api["count_errors"] == []
    ref = api["reference"]
    assert ref["counts_match"] is True and ref["rounds"] == 2
    plain = ref["overhead_us_per_word"]["plain"]
    engine, hosted = api["engine_path"], api["no_engine"]
    assert set(engine["us_per_word"]) == {"spout emit", "bolt execute"}
    assert len(engine["non_api_us_per_word"]) == len(NON_API_STEPS)
    assert engine["overhead_us_per_word"] == pytest.approx(
        sum(engine["us_per_word"].values()) - sum(engine["non_api_us_per_word"].values()),
        abs=1e-3)
    assert hosted["fused_us_per_word"] == ref["us_per_word"]["fused"]
    assert hosted["overhead_us_per_word"] == pytest.approx(
        hosted["us_per_word"] - hosted["fused_us_per_word"], abs=1e-3)
    for ours, key in ((engine, "engine_path_met"), (hosted, "no_engine_met")):
        if plain <= 0:  # a few thousand words on a busy machine: no ratio to take
            assert ours["over_plain"] is None and api["goal"][key] is None
            continue
        assert ours["over_plain"] == pytest.approx(ours["overhead_us_per_word"] / plain,
                                                   rel=1e-2, abs=1e-3)
        if abs(ours["over_plain"] - API_GOAL_OVER_PLAIN) > 1e-3:  # (not on the rounding edge)
            assert api["goal"][key] == (ours["over_plain"] <= API_GOAL_OVER_PLAIN)
    assert len(api["seconds_per_round"]["hosted"]) == 2


def test_the_api_overhead_is_printed_with_a_verdict_and_can_be_skipped(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the table's rows on one line each
    assert main(["--tuples", "1500", "--reliability", "at-most-once", "--rounds", "1"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    for part in ("API overhead per tuple", "reference: plain objects",
                 "reference: Storm's records", "ours, no engine", "ours, engine path",
                 "goal (issue 31): our API overhead per tuple", "(figures only",
                 "✓ counts: in every round", "load average"):
        assert part in flat, (part, flat)
    assert main(["--tuples", "1500", "--reliability", "at-most-once", "--json",
                 "--no-api"]) == 0
    assert "api_overhead" not in json.loads(capsys.readouterr().out)


def test_the_no_engine_path_counts_what_the_fused_loop_counts():
    """WordSpout and HeronCountBolt hosted as the engines host them, each word handed to
    one of the two counting tasks by its hash: the fused loop's counts."""
    from bench.api_overhead import time_hosted
    from bench.reference_loop import picker_of, run_fused
    from bench.wordcount_figures import TOPOLOGY_HERON, bench_options
    from bench.wordcount_runs import load

    loaded = load(bench_options(3000, 5), 2, topology=TOPOLOGY_HERON)
    took, counts = time_hosted(loaded, 3000)
    assert took >= 0
    assert counts == run_fused(3000, picker_of(loaded, 5))


def test_the_verdict_and_the_subtractions_from_given_figures():
    """ApiFigures' arithmetic on made-up figures: overheads, ratios, the verdict."""
    from bench.api_overhead import ApiFigures, api_lines
    from bench.reference_loop import ReferenceFigures

    words = 1_000_000  # so one second is one µs per word
    ref = ReferenceFigures(words, 7, "best", {"fused": [1.0, 1.2], "plain": [2.0, 2.1],
                                              "named": [2.5, 2.4]})
    api = ApiFigures(words, ref, seconds={"hosted": [1.5, 1.4], "spout emit": [2.0, 2.2],
                                          "bolt execute": [3.0, 2.9]},
                     steps={"pick the word (x)": [0.7, 0.8], "serialize the row": [0.2, 0.2],
                            "hash the grouping key (y)": [0.1, 0.1],
                            "decode the rows (z)": [0.4, 0.5],
                            "build the Tuple (w)": [0.5, 0.5], "count the word": [0.6, 0.6]})
    assert ref.overhead_us() == pytest.approx({"plain": 1.0, "named": 1.4})
    assert api.hosted_overhead_us() == pytest.approx(0.4)
    assert api.engine_path_us() == pytest.approx(4.9)
    assert set(api.non_api_us()) == {"pick the word (x)", "serialize the row",
                                     "hash the grouping key (y)", "decode the rows (z)",
                                     "count the word"}  # building the Tuple is the API's
    assert api.engine_overhead_us() == pytest.approx(4.9 - 2.0)
    assert api.ratios(0.4) == pytest.approx({"over_plain": 0.4, "over_named": 0.4 / 1.4})
    assert (api.goal_met(api.hosted_overhead_us()), api.goal_met(api.engine_overhead_us())) == (
        True, False)
    lines = api_lines(api)
    assert "met by the no-engine path only" in lines[0] and "(0.40x)" in lines[0]
    assert lines[1].startswith("✓ counts")
    api.count_errors.append("round 1: the engine path executed 1 of 2 words")
    assert not api.counts_ok and api_lines(api)[1].startswith("✗ counts: round 1")
    out = api.as_json()
    assert out["goal"] == {"our_overhead_over_plain_at_most": 0.5, "engine_path_met": False,
                           "no_engine_met": True}
    assert out["counts_match"] is False
