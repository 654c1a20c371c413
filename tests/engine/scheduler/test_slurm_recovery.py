"""Recovery times of the Slurm scheduler measured from the failure: each container's last
sign of life comes from the Topology Master's report ages (its Metrics Manager's figures;
the Topology Master's own answers for container 0) and a recovery ends when the
replacement reports again, not when Slurm noticed the loss or started the job."""

from __future__ import annotations

from engine.scheduler.slurm.recovery import LastSeen, recovery_times
from engine.scheduler.slurm.scheduler import SchedulerEvent
from engine.tmanager.client import MetricsSnapshot, TManagerUnavailable


def answer(at: float, ages: dict[int, float]) -> MetricsSnapshot:
    return MetricsSnapshot(time=at, values={
        f"metricsmgr-{c}": {"__prometheus-port": "1", "__report-age": str(age)}
        for c, age in ages.items()})


def test_last_seen_keeps_each_container_s_newest_report_through_silence():
    answers = [answer(100.0, {0: 0, 1: 1, 2: 0}), answer(104.0, {0: 0, 1: 0, 2: 4})]

    def ask():
        if not answers:
            raise TManagerUnavailable("the Topology Master did not answer")
        return answers.pop(0)

    seen = LastSeen(ask)
    seen.poll([0, 1, 2])
    assert (seen.last(0), seen.last(1), seen.last(2)) == (100.0, 99.0, 100.0)
    seen.poll([0, 1, 2])   # container 2 stopped reporting at 100: its age grew to 4
    assert (seen.last(0), seen.last(1), seen.last(2)) == (104.0, 104.0, 100.0)
    seen.poll([0, 1, 2])   # the Topology Master is gone: what was known stays
    assert seen.last(0) == 104.0 and seen.last(3) is None


def event(at: float, container: int, what: str, detail: str = "", **extra) -> SchedulerEvent:
    return SchedulerEvent(at, container, "17", what, detail, extra)


def test_a_recovery_runs_from_the_failure_to_the_replacement_reporting_again():
    events = [event(50.0, 2, "running", "on node2"),
              event(107.2, 2, "node lost", "node2 is DOWN*", failed_at=100.0),
              event(107.3, 2, "submitted", "node node2 is DOWN*"),
              event(110.0, 2, "running", "on node3"),
              event(112.1, 2, "rejoined", "reports again")]
    (recovery,) = recovery_times(events)
    assert recovery == {"container": 2, "cause": "node2 is DOWN*", "seconds": 12.1,
                        "measured_from": "last report", "detected_after": 7.2,
                        "running_after": 10.0}


def test_without_a_last_report_the_recovery_runs_from_its_detection_and_says_so():
    events = [event(10.0, 0, "ended", "NODE_FAIL on node1"),
              event(14.0, 0, "running", "on node2"), event(15.0, 0, "rejoined")]
    (recovery,) = recovery_times(events)
    assert recovery["seconds"] == 5.0 and recovery["measured_from"] == "detection"
    assert recovery["detected_after"] == 0.0 and recovery["running_after"] == 4.0


def test_a_replacement_not_yet_reporting_is_not_a_recovery_yet():
    events = [event(10.0, 1, "ended", "FAILED", failed_at=9.0), event(12.0, 1, "running")]
    assert recovery_times(events) == []
