"""Each detector on recorded series: what must trigger, and noise that must not."""

from __future__ import annotations

import pytest

from engine.healthmgr.capacity import CapacityEstimates
from engine.healthmgr.detectors.backpressure import BackPressureDetector
from engine.healthmgr.detectors.over_provisioning import OverProvisioningDetector
from engine.healthmgr.detectors.skew import processing_rate_skew_detector, wait_queue_skew_detector
from engine.healthmgr.detectors.wait_queue import GrowingWaitQueueDetector, LargeWaitQueueDetector
from engine.healthmgr.records import SymptomKind
from tests.engine.healthmgr.conftest import measured
from tests.engine.healthmgr.recordings import Profile, record

C0, C1, C2 = "container_1_count_0", "container_2_count_1", "container_1_count_2"


# -- backpressure ---------------------------------------------------------------------------
def test_backpressure_well_above_the_noise_filter_names_the_component_and_instances():
    rec = record({"count": [Profile(bp=450, jitter=0.2), Profile(bp=430, jitter=0.2)]})
    [s] = BackPressureDetector().detect(measured(rec))
    assert (s.kind, s.component, s.instances) == (SymptomKind.BACK_PRESSURE, "count", (C0, C1))
    assert s.detail["ms_per_s"] == pytest.approx(880, rel=0.05)


def test_backpressure_under_the_noise_filter_does_not_trigger():
    # bursts of a few ms a second on one instance, as any busy topology has
    bursts = lambda t: 60.0 if int(t) % 70 == 0 else 3.0  # noqa: E731
    rec = record({"count": [Profile(bp=bursts, jitter=0.5), Profile(bp=0)]})
    assert BackPressureDetector().detect(measured(rec)) == []


def test_component_backpressure_is_the_sum_of_its_instances_as_in_heron():
    # 12 ms/s each: no instance over 20, the component (24) is
    rec = record({"count": [Profile(bp=12), Profile(bp=12)]})
    [s] = BackPressureDetector().detect(measured(rec))
    assert s.instances == ()
    assert s.detail["ms_per_s"] == pytest.approx(24, abs=0.5)


# -- wait queues ----------------------------------------------------------------------------
def test_large_wait_queue_is_a_mean_above_the_limit():
    rec = record({"count": [Profile(queue=4000, jitter=0.3), Profile(queue=200)]})
    [s] = LargeWaitQueueDetector().detect(measured(rec))
    assert s.instances == (C0,)


def test_one_spike_in_the_wait_queue_is_not_a_large_queue():
    spike = lambda t: 20_000.0 if t == 150 else 300.0  # noqa: E731
    rec = record({"count": [Profile(queue=spike), Profile(queue=300)]})
    assert LargeWaitQueueDetector().detect(measured(rec)) == []


def test_growing_wait_queue_is_a_regression_slope_above_the_limit():
    rec = record({"count": [Profile(queue=lambda t: 500 + 40 * t, jitter=0.05),
                            Profile(queue=500, jitter=0.05)]})
    [s] = GrowingWaitQueueDetector().detect(measured(rec))
    assert s.instances == (C0,)
    assert s.detail["max_slope"] == pytest.approx(40, rel=0.15)


def test_a_noisy_but_flat_wait_queue_is_not_growing():
    rec = record({"count": [Profile(queue=3000, jitter=0.6), Profile(queue=3000, jitter=0.6)]},
                 seed=11)
    assert GrowingWaitQueueDetector().detect(measured(rec)) == []


def test_a_trend_needs_three_points():
    # two polls 10 s apart, the queue up by 10 kB: steep, but two points are no trend
    rec = record({"count": [Profile(queue=lambda t: 100 + 1000 * t)]}, secs=10)
    m = measured(rec)
    assert len(m.components["count"].instances[C0].wait_queue) == 2
    assert GrowingWaitQueueDetector().detect(m) == []
    rec3 = record({"count": [Profile(queue=lambda t: 100 + 1000 * t)]}, secs=20)
    assert len(GrowingWaitQueueDetector().detect(measured(rec3))) == 1


# -- skew -----------------------------------------------------------------------------------
def test_processing_rate_skew_names_the_high_side_and_the_low_side():
    rec = record({"count": [Profile(rate=310, jitter=0.1), Profile(rate=100, jitter=0.1),
                            Profile(rate=290, jitter=0.1)]})
    [s] = processing_rate_skew_detector().detect(measured(rec))
    assert s.kind is SymptomKind.PROCESSING_RATE_SKEW
    assert s.instances == (C0, C2)
    assert s.detail["low"] == [C1]


def test_rates_within_the_skew_ratio_are_not_skewed_however_noisy():
    rec = record({"count": [Profile(rate=200, jitter=0.3), Profile(rate=170, jitter=0.3),
                            Profile(rate=230, jitter=0.3)]})
    assert processing_rate_skew_detector().detect(measured(rec)) == []


def test_wait_queue_skew_needs_a_ratio_of_twenty():
    skewed = record({"count": [Profile(queue=50_000, jitter=0.2), Profile(queue=1_000)]})
    [s] = wait_queue_skew_detector().detect(measured(skewed))
    assert s.instances == (C0,)
    mild = record({"count": [Profile(queue=15_000, jitter=0.2), Profile(queue=1_000)]})
    assert wait_queue_skew_detector().detect(measured(mild)) == []


def test_a_single_instance_cannot_be_skewed():
    rec = record({"count": [Profile(rate=500)]})
    assert processing_rate_skew_detector().detect(measured(rec)) == []


# -- over-provisioning ----------------------------------------------------------------------
def low_load(rate: float = 60.0, **extra: object) -> dict[str, list[Profile]]:
    return {"count": [Profile(rate=rate, jitter=0.2, **extra) for _ in range(4)]}


def known_capacity(per_instance: float = 200.0) -> CapacityEstimates:
    caps = CapacityEstimates()
    caps.observe_saturated("count", per_instance)
    return caps


def test_low_utilisation_for_the_whole_window_is_over_provisioning():
    rec = record(low_load())  # 4 x 60/s against 4 x 200/s: 30%
    [s] = OverProvisioningDetector(window_secs=300).detect(measured(rec), known_capacity())
    assert s.kind is SymptomKind.OVER_PROVISIONING
    assert s.detail["peak_utilisation"] < 0.5
    assert s.detail["mean_rate"] == pytest.approx(240, rel=0.05)
    assert s.detail["capacity_from"] == "saturated"


def test_one_busy_moment_in_the_window_is_not_over_provisioning():
    burst = lambda t: 180.0 if 100 <= t < 110 else 60.0  # noqa: E731
    rec = record({"count": [Profile(rate=burst) for _ in range(4)]})
    assert OverProvisioningDetector(window_secs=300).detect(measured(rec), known_capacity()) == []


def test_any_backpressure_in_the_window_is_not_over_provisioning():
    blip = lambda t: 80.0 if t == 200 else 0.0  # noqa: E731
    rec = record(low_load(bp=blip))
    assert OverProvisioningDetector(window_secs=300).detect(measured(rec), known_capacity()) == []


def test_a_window_only_partly_covered_is_not_enough_evidence():
    rec = record(low_load(), secs=200)  # 200 of 300 s
    assert OverProvisioningDetector(window_secs=300).detect(measured(rec), known_capacity()) == []


def test_without_a_known_capacity_nothing_is_over_provisioned():
    rec = record(low_load())
    assert OverProvisioningDetector(window_secs=300).detect(measured(rec),
                                                            CapacityEstimates()) == []


def test_capacity_falls_back_to_execute_latency():
    rec = record(low_load(latency_ms=5.0))  # 5 ms per tuple: 200/s per instance
    [s] = OverProvisioningDetector(window_secs=300).detect(measured(rec), CapacityEstimates())
    assert s.detail["capacity_per_instance"] == pytest.approx(200)
    assert s.detail["capacity_from"] == "latency"


def test_a_single_instance_is_never_over_provisioned():
    rec = record({"count": [Profile(rate=5)]})
    assert OverProvisioningDetector(window_secs=300).detect(measured(rec), known_capacity()) == []
