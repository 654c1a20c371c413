"""A flapping backpressure does not flood the Stream Manager's log (issue 44): the first
episode after a quiet second is logged in full (its start and its stop), the episodes
that follow within the second are counted, and at most one summary line a second gives
their count; a quiet second ends the flapping. With a fake clock."""

from __future__ import annotations

import logging

import pytest

from engine.stmgr.backpressure import EpisodeLog


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def lines(caplog):
    caplog.set_level(logging.INFO, logger="heron.stmgr")
    return lambda: [r.getMessage() for r in caplog.records if r.name == "heron.stmgr"]


def test_a_single_episode_logs_its_start_and_its_stop(lines):
    clock = Clock()
    bp = EpisodeLog("backpressure", clock=clock)
    bp.start("backpressure: %d bytes waiting", 5000)
    clock.now += 0.25
    bp.stop("backpressure over")
    assert lines() == ["backpressure: 5000 bytes waiting", "backpressure over after 250 ms"]


def test_flapping_at_20_episodes_a_second_logs_about_one_line_a_second(lines):
    clock = Clock()
    bp = EpisodeLog("backpressure", clock=clock)
    # 10 s of flapping: 20 episodes a second, each 20 ms in backpressure, 30 ms out;
    # the loop's flush runs every 10 ms in between
    for _ in range(200):
        bp.start("backpressure: starts")
        for _ in range(2):
            clock.now += 0.01
            bp.flush(active=True)
        bp.stop("backpressure over")
        for _ in range(3):
            clock.now += 0.01
            bp.flush(active=False)
    logged = lines()
    # the first start and stop are there, as they were
    assert logged[:2] == ["backpressure: starts", "backpressure over after 20 ms"]
    summaries = logged[2:]
    assert all(s.startswith("backpressure flapping: ") for s in summaries), summaries
    assert 8 <= len(summaries) <= 11, summaries  # about one a second, not 400 lines
    # every episode is counted once: 199 after the first
    counted = sum(int(s.split(": ")[1].split()[0]) for s in summaries)
    clock.now += 1.0
    bp.flush(active=False)
    last = lines()[len(logged):]
    counted += sum(int(s.split(": ")[1].split()[0]) for s in last)
    assert counted == 199, (summaries, last)
    # a summary says how long of it was spent in backpressure: 40 % of a second here
    ms = int(summaries[1].split(", ")[1].split()[0])
    assert 300 <= ms <= 500, summaries[1]


def test_a_quiet_second_ends_the_flapping_and_the_next_episode_is_logged_in_full(lines):
    clock = Clock()
    bp = EpisodeLog("stmgr-2's backpressure", clock=clock)
    bp.start("stmgr-2 is in backpressure")
    clock.now += 0.1
    bp.stop("stmgr-2 is out of backpressure")
    for _ in range(3):  # within the second: counted
        clock.now += 0.1
        bp.start("stmgr-2 is in backpressure")
        clock.now += 0.05
        bp.stop("stmgr-2 is out of backpressure")
    assert len(lines()) == 2
    clock.now += 1.0
    bp.flush(active=False)  # the loop's next turn: the count is not lost
    assert lines()[2].startswith("stmgr-2's backpressure flapping: 3 more episode(s)")
    assert lines()[2].endswith("out of it now")
    clock.now += 1.5
    bp.flush(active=False)
    bp.start("stmgr-2 is in backpressure")
    clock.now += 0.5
    bp.stop("stmgr-2 is out of backpressure")
    assert lines()[3:] == ["stmgr-2 is in backpressure",
                           "stmgr-2 is out of backpressure after 500 ms"]


def test_a_long_episode_inside_flapping_is_summarised_while_it_lasts(lines):
    clock = Clock()
    bp = EpisodeLog("backpressure", clock=clock)
    bp.start("start")
    clock.now += 0.1
    bp.stop("over")
    clock.now += 0.1
    bp.start("start")  # counted
    for _ in range(30):
        clock.now += 0.1
        bp.flush(active=True)
    logged = lines()
    assert len(logged) == 3, logged
    assert logged[2].endswith("in backpressure now"), logged
