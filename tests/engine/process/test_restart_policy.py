"""The restart policy: its keys, the backoff sequence, the crash-loop threshold, and
the resets (progress, or running for the reset time)."""

from __future__ import annotations

import json

import pytest

from engine.common.process.restart_policy import (
    INITIAL_KEY,
    MAX_KEY,
    RESET_KEY,
    RestartPolicy,
    RestartPolicyError,
    RestartTracker,
    crash_loop_error,
)
from engine.metricsmgr.manager import restart_statuses


def test_defaults_and_keys():
    assert RestartPolicy.from_config({}) == RestartPolicy(1000, 30000, 60.0, 3)
    assert RestartPolicy().sequence(7) == [1000, 2000, 4000, 8000, 16000, 30000, 30000]
    policy = RestartPolicy.from_config({INITIAL_KEY: "50", MAX_KEY: 300, RESET_KEY: 2})
    assert (policy.initial_ms, policy.max_ms, policy.reset_after_secs) == (50, 300, 2.0)
    assert policy.sequence(5) == [50, 100, 200, 300, 300]
    # an initial delay above the default cap raises the cap when it is not given
    assert RestartPolicy.from_config({INITIAL_KEY: 45000}).max_ms == 45000


@pytest.mark.parametrize("conf, named", [({INITIAL_KEY: "soon"}, INITIAL_KEY),
                                         ({INITIAL_KEY: -1}, INITIAL_KEY),
                                         ({INITIAL_KEY: 500, MAX_KEY: 100}, MAX_KEY),
                                         ({RESET_KEY: 0}, RESET_KEY),
                                         ({MAX_KEY: True}, MAX_KEY)])
def test_bad_values_are_errors_naming_the_key(conf, named):
    with pytest.raises(RestartPolicyError, match=named.replace(".", r"\.")):
        RestartPolicy.from_config(conf)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_tracker_backs_off_crash_loops_and_resets_on_progress_or_running_time():
    clock = Clock()
    tracker = RestartTracker("c", RestartPolicy(10, 1000, reset_after_secs=60), clock=clock)
    delays = [tracker.failed("boom") for _ in range(4)]
    assert delays == [0.01, 0.02, 0.04, 0.08]
    assert tracker.crash_looping and tracker.failures_in_a_row == 4
    assert [r.crash_looping for r in tracker.records] == [False, False, True, True]
    tracker.started()
    tracker.progressed()
    assert not tracker.crash_looping
    assert tracker.failed("boom") == 0  # after progress: at once
    assert tracker.failed("boom") == 0.01  # the sequence starts again
    tracker.failed("boom"), tracker.failed("boom")
    assert tracker.crash_looping
    tracker.started()
    clock.now += 59
    assert not tracker.tick() and tracker.crash_looping
    clock.now += 1
    assert tracker.tick() and not tracker.crash_looping  # ran for the reset time
    tracker.started()
    clock.now += 61
    assert tracker.failed("late") == 0 and tracker.records[-1].progressed


def test_crash_loop_error_reads_the_instance_or_the_process_view():
    assert crash_loop_error({"__crash-looping": "0", "__last-error": "x"}) is None
    assert crash_loop_error({"__crash-looping": "1", "__last-error": "E: x"}) == "E: x"
    assert crash_loop_error({"__process-crash-looping": "1",
                             "__process-last-error": "exited with status 1"}) == \
        "exited with status 1"


def test_the_metrics_manager_reads_its_containers_restart_statuses(tmp_path):
    for name, looping in (("container_1_count_3", True), ("stmgr-1", False),
                          ("container_2_count_4", True), ("executor-1", True)):
        (tmp_path / f"{name}.json").write_text(json.dumps(
            {"crash_looping": looping, "last_error": "exited with status 1", "attempts": 3}))
    (tmp_path / "container_1_broken_5.json").write_text("{not json")
    assert [(n, s["crash_looping"]) for n, s in restart_statuses(tmp_path, 1)] == [
        ("container_1_count_3", True), ("stmgr-1", False)]
