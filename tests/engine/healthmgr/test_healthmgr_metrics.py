"""Series arithmetic: counters into rates, time-weighted means, trends, alignment."""

from __future__ import annotations

import pytest

from engine.healthmgr.metrics import Series, aligned_sum, counter_rates, gauge_series


def test_counter_rates_are_per_second_increases_stamped_at_interval_end():
    rates = counter_rates([(0.0, 0.0), (10.0, 2000.0), (20.0, 3000.0)])
    assert rates.times == (10.0, 20.0)
    assert rates.values == (200.0, 100.0)
    assert rates.spans == (10.0, 10.0)


def test_a_counter_that_went_down_restarted_so_its_increase_is_its_new_value():
    rates = counter_rates([(0.0, 5000.0), (10.0, 300.0)])
    assert rates.values == (30.0,)


def test_backpressure_rate_is_capped_like_herons_sensor():
    # 12 s of backpressure reported over 10 s (the bug Heron's sensor corrects)
    assert counter_rates([(0.0, 0.0), (10.0, 12_000.0)], cap=1000.0).values == (1000.0,)


def test_mean_of_rates_weighs_each_value_by_the_time_it_covers():
    # a missed poll: the second rate covers 20 s and must count twice
    rates = counter_rates([(0.0, 0.0), (10.0, 1000.0), (30.0, 1600.0)])
    assert rates.values == (100.0, 30.0)
    assert rates.mean() == pytest.approx((100 * 10 + 30 * 20) / 30)
    assert rates.coverage() == 30.0


def test_gauge_mean_is_plain_and_empty_series_mean_is_zero():
    assert gauge_series([(0.0, 10.0), (5.0, 30.0), (30.0, 50.0)]).mean() == 30.0
    assert Series((), ()).mean() == 0.0


def test_slope_is_least_squares_per_second():
    queue = gauge_series([(0.0, 100.0), (10.0, 400.0), (20.0, 650.0), (30.0, 1000.0)])
    # sum((t - 15)(v - 537.5)) / sum((t - 15)^2) = 14750 / 500
    assert queue.slope() == pytest.approx(29.5)
    assert gauge_series([(0.0, 1.0)]).slope() == 0.0


def test_aligned_sum_drops_times_an_instance_is_missing():
    a = gauge_series([(10.0, 1.0), (20.0, 2.0), (30.0, 3.0)])
    b = gauge_series([(10.0, 10.0), (30.0, 30.0)])
    total = aligned_sum([a, b])
    assert total.times == (10.0, 30.0)
    assert total.values == (11.0, 33.0)


def test_series_rejects_out_of_order_times():
    with pytest.raises(ValueError):
        Series((2.0, 1.0), (0.0, 0.0))
