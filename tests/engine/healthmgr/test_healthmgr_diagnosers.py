"""Diagnosers on recorded series: each cause, and the cases Heron leaves undiagnosed."""

from __future__ import annotations

from engine.healthmgr.capacity import CapacityEstimates
from engine.healthmgr.detectors.backpressure import BackPressureDetector
from engine.healthmgr.detectors.over_provisioning import OverProvisioningDetector
from engine.healthmgr.detectors.skew import processing_rate_skew_detector, wait_queue_skew_detector
from engine.healthmgr.diagnosers.data_skew import DataSkewDiagnoser
from engine.healthmgr.diagnosers.over_provisioning import OverProvisioningDiagnoser
from engine.healthmgr.diagnosers.slow_instance import SlowInstanceDiagnoser
from engine.healthmgr.diagnosers.under_provisioning import UnderProvisioningDiagnoser
from engine.healthmgr.records import DiagnosisKind
from engine.healthmgr.sensors import Measurements
from tests.engine.healthmgr.conftest import measured
from tests.engine.healthmgr.recordings import Profile, record

DIAGNOSERS = (UnderProvisioningDiagnoser(), SlowInstanceDiagnoser(), DataSkewDiagnoser())


def diagnose(m: Measurements, capacities: CapacityEstimates | None = None):
    symptoms = [*BackPressureDetector().detect(m), *processing_rate_skew_detector().detect(m),
                *wait_queue_skew_detector().detect(m)]
    if capacities is not None:
        symptoms += OverProvisioningDetector(300).detect(m, capacities)
    out = [d for diagnoser in DIAGNOSERS for d in diagnoser.diagnose(symptoms, m)]
    return out + OverProvisioningDiagnoser().diagnose(symptoms, m)


def test_even_backpressure_and_even_instances_is_under_provisioning():
    # offered 600/s to 2 instances of 200/s: both saturated, queues alike
    rec = record({"count": [Profile(rate=200, bp=650, queue=90_000, jitter=0.15),
                            Profile(rate=200, bp=640, queue=85_000, jitter=0.15)]})
    [d] = diagnose(measured(rec))
    assert (d.kind, d.component) == (DiagnosisKind.UNDER_PROVISIONING, "count")
    assert 1200 < d.detail["ms_per_s"] < 1400


def test_one_instance_with_a_long_queue_at_the_common_rate_is_a_slow_instance():
    # shuffle: everyone is held to the slow one's pace, only its queue stands out
    rec = record({"count": [Profile(rate=80, bp=700, queue=200_000, jitter=0.1),
                            Profile(rate=80, bp=0, queue=2_000, jitter=0.1),
                            Profile(rate=78, bp=0, queue=1_500, jitter=0.1)]})
    [d] = diagnose(measured(rec))
    assert d.kind is DiagnosisKind.SLOW_INSTANCE
    assert d.instances == ("container_1_count_0",)


def test_a_hot_instance_with_a_long_queue_and_the_highest_rate_is_data_skew():
    rec = record({"count": [Profile(rate=190, bp=600, queue=150_000, jitter=0.1),
                            Profile(rate=40, bp=0, queue=500, jitter=0.1),
                            Profile(rate=35, bp=0, queue=400, jitter=0.1)]})
    [d] = diagnose(measured(rec))
    assert d.kind is DiagnosisKind.DATA_SKEW
    assert d.instances == ("container_1_count_0",)


def test_two_components_in_backpressure_give_no_diagnosis_as_in_heron():
    rec = record({"count": [Profile(rate=200, bp=500), Profile(rate=200, bp=500)],
                  "sink": [Profile(rate=400, bp=300)]})
    assert diagnose(measured(rec)) == []


def test_no_backpressure_no_heron_diagnosis():
    rec = record({"count": [Profile(rate=200, queue=100_000), Profile(rate=60, queue=100)]})
    assert diagnose(measured(rec)) == []


def test_over_provisioning_is_diagnosed_only_when_nothing_is_in_backpressure():
    caps = CapacityEstimates({"count": 200.0})
    idle = {"count": [Profile(rate=40, jitter=0.2) for _ in range(4)]}
    [d] = diagnose(measured(record(idle)), caps)
    assert (d.kind, d.component) == (DiagnosisKind.OVER_PROVISIONING, "count")
    # the sink downstream holds the spouts: count's low rate says nothing about its need
    starved = {**idle, "sink": [Profile(rate=160, bp=700)]}
    kinds = [d.kind for d in diagnose(measured(record(starved)), caps)]
    assert DiagnosisKind.OVER_PROVISIONING not in kinds
    assert kinds == [DiagnosisKind.UNDER_PROVISIONING]


# -- a slow instance whose peers starve: rates skewed its way, latency tells -------------

def starving_peers(flaky_latency: float | None, peer_latency: float | None) -> Measurements:
    """A shuffle-grouped bolt whose instance 0 takes 50 ms a tuple: it holds the Stream
    Manager in backpressure nearly all the time and drains its queue at 20/s; the spout
    only sends between the watermarks, so its peers, fast and with nothing queued,
    execute a few tuples/s over the window: the rates are skewed towards the slow one,
    as for a hot key (recorded from the e2e_restart topology)."""
    rec = record({"count": [Profile(rate=20, bp=990, queue=21_000, latency_ms=flaky_latency,
                                    jitter=0.05),
                            Profile(rate=3, bp=0, queue=0, latency_ms=peer_latency, jitter=0.3),
                            Profile(rate=4, bp=0, queue=0, latency_ms=peer_latency,
                                    jitter=0.3)]})
    return measured(rec)


def test_a_slow_instance_with_starving_peers_is_slow_by_its_execute_latency():
    [d] = diagnose(starving_peers(flaky_latency=50.0, peer_latency=1.0))
    assert d.kind is DiagnosisKind.SLOW_INSTANCE
    assert d.instances == ("container_1_count_0",)
    assert 45 < d.detail["mean_latency_ms"]["container_1_count_0"] < 55


def test_a_hot_key_takes_as_long_per_tuple_as_its_peers_and_stays_data_skew():
    # the same rates and queues, but every instance takes 5 ms a tuple: a hot key
    [d] = diagnose(starving_peers(flaky_latency=5.0, peer_latency=4.5))
    assert d.kind is DiagnosisKind.DATA_SKEW
    assert d.instances == ("container_1_count_0",)


def test_without_latency_data_skewed_rates_are_heron_s_data_skew():
    [d] = diagnose(starving_peers(flaky_latency=None, peer_latency=None))
    assert d.kind is DiagnosisKind.DATA_SKEW


def test_the_auto_restart_policy_restarts_the_container_of_a_slow_instance_with_starving_peers():
    from engine.healthmgr.policies.auto_restart import AutoRestartPolicy
    from engine.healthmgr.policies.config import parse_health_config
    from engine.healthmgr.records import ActionKind

    rec = record({"count": [Profile(rate=20, bp=990, queue=21_000, latency_ms=50.0),
                            Profile(rate=3, queue=0, latency_ms=1.0, jitter=0.3),
                            Profile(rate=4, queue=0, latency_ms=1.0, jitter=0.3)]})
    config = parse_health_config({"heron.topology.healthmgr.mode": "cluster",
                                  "heron.class.health.policies":
                                      ["auto-restart-backpressure-container"]})
    policy = AutoRestartPolicy(config.policies[0])
    result = policy.evaluate(rec.history, rec.view(), rec.end, None, CapacityEstimates())
    assert [d.kind for d in result.diagnoses] == [DiagnosisKind.SLOW_INSTANCE]
    assert result.action is not None and result.action.kind is ActionKind.RESTART_CONTAINER
    assert result.action.container == rec.layout["count"]["container_1_count_0"]


def test_a_slow_instance_whose_shuffle_grouped_peers_starve_is_a_slow_instance():
    # under byte credits the spouts stay paused while the slow instance's queue drains from
    # the high watermark to the low one: its peers execute nothing in the whole window and
    # publish no latency to compare with; only the slow one executes
    rec = record({"count": [Profile(rate=20, bp=900, queue=20_000, latency_ms=50.0,
                                    jitter=0.05),
                            Profile(rate=0), Profile(rate=0)]})
    [d] = diagnose(measured(rec))
    assert (d.kind, d.instances) == (DiagnosisKind.SLOW_INSTANCE, ("container_1_count_0",))
    # fields-grouped, one instance getting every tuple may be a hot key: Heron's reading
    assert [d.kind for d in diagnose(measured(rec, fields={"count": True}))] == [
        DiagnosisKind.DATA_SKEW]
    # a peer that executed anything is evidence the other way: Heron's rules decide
    busy = record({"count": [Profile(rate=20, bp=900, queue=20_000, latency_ms=50.0),
                             Profile(rate=5), Profile(rate=0)]})
    assert [d.kind for d in diagnose(measured(busy))] != [DiagnosisKind.SLOW_INSTANCE]


def test_a_slow_instance_whose_stream_manager_pauses_by_the_time_watermark_is_restarted():
    # the e2e_restart picture under byte credits: the slow instance's oldest message
    # waits past the time watermark, so its Stream Manager keeps the spouts paused all
    # window long, while the bytes waiting for it stay under the high watermark and it is
    # never blamed; its shuffle-grouped peers execute nothing
    from engine.healthmgr.policies.auto_restart import AutoRestartPolicy
    from engine.healthmgr.policies.config import parse_health_config
    from engine.healthmgr.records import ActionKind

    def slow_one(held: float):
        return record({"count": [Profile(rate=20, bp=0, held=held, queue=12_000,
                                          latency_ms=50.0, jitter=0.05),
                                  Profile(rate=0, latency_ms=1.1), Profile(rate=0)]},
                      secs=10.0, period=1.0)

    config = parse_health_config({"heron.topology.healthmgr.mode": "cluster",
                                  "heron.class.health.policies":
                                      ["auto-restart-backpressure-container"]})
    policy = AutoRestartPolicy(config.policies[0])
    rec = slow_one(held=950)
    result = policy.evaluate(rec.history, rec.view(), rec.end, None, CapacityEstimates())
    assert [(d.kind, d.instances) for d in result.diagnoses] == [
        (DiagnosisKind.SLOW_INSTANCE, ("container_1_count_0",))]
    assert result.action is not None and result.action.kind is ActionKind.RESTART_CONTAINER
    assert result.action.container == rec.layout["count"]["container_1_count_0"]
    # what the Health Manager saw before it read the Stream Manager's own total: the
    # symptoms of skew, no backpressure, no diagnosis, no restart
    rec = slow_one(held=0)
    result = policy.evaluate(rec.history, rec.view(), rec.end, None, CapacityEstimates())
    assert result.diagnoses == [] and result.action is None
