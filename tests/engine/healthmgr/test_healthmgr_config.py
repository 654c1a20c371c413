"""Configuration from the topology config: Heron's keys, defaults, errors naming the key."""

from __future__ import annotations

import pytest

from engine.healthmgr.errors import HealthConfigError
from engine.healthmgr.policies.config import (
    AUTO_RESTART,
    DYNAMIC_RESOURCE_ALLOCATION,
    PolicyKind,
    parse_health_config,
    runtime_mode,
)

DRA = DYNAMIC_RESOURCE_ALLOCATION


def test_defaults_run_dynamic_allocation_activated_and_auto_restart_deactivated():
    cfg = parse_health_config({"heron.topology.healthmgr.mode": "cluster"})
    assert cfg.enabled
    dra, restart = cfg.policies
    assert (dra.id, dra.kind, dra.activated) == (DRA, PolicyKind.DYNAMIC_RESOURCE_ALLOCATION, True)
    assert (restart.id, restart.activated) == (AUTO_RESTART, False)
    assert (dra.interval_secs, dra.wait_secs, dra.duration("BackPressureSensor")) == (60, 180, 300)
    assert (dra.noise_filter_ms, dra.rate_skew_ratio, dra.wait_queue_skew_ratio) == (20, 1.5, 20)
    assert (cfg.max_parallelism, cfg.max_actions_per_hour) == (16, 6)
    assert not parse_health_config({}).enabled


def test_herons_nested_layout_and_key_names_with_string_values():
    cfg = parse_health_config({
        "heron.class.health.policies": ["scaler"],
        "scaler": {"health.policy.class":
                   "org.apache.heron.healthmgr.policy.DynamicResourceAllocationPolicy",
                   "health.policy.mode": "deactivated",
                   "health.policy.interval.ms": "2000",
                   "DynamicResourceAllocationPolicy.conf_post_action_wait_interval_min": 15000,
                   "BackPressureSensor.duration": "10",
                   "BackPressureDetector.noiseFilterMillis": "50",
                   "ScaleDownResolver.allowKeyMoves": "true"}})
    [p] = cfg.policies
    assert (p.id, p.activated, p.interval_secs, p.wait_secs) == ("scaler", False, 2.0, 15.0)
    assert p.duration("BackPressureSensor") == 10.0
    assert p.duration("ExecuteCountSensor") == 300.0  # the others keep the default window
    assert (p.noise_filter_ms, p.allow_key_moves) == (50.0, True)


def test_flat_keys_and_one_window_for_every_sensor():
    cfg = parse_health_config({"heron.class.health.policies": "dynamic-resource-allocation",
                               "dynamic-resource-allocation.health.policy.window.ms": 10_000,
                               "dynamic-resource-allocation.health.policy.post.action.wait.ms":
                               "15000"})
    [p] = cfg.policies
    assert set(p.durations.values()) == {10.0}
    assert p.wait_secs == 15.0


@pytest.mark.parametrize(("config", "key", "words"), [
    ({"heron.topology.healthmgr.mode": "on"}, "heron.topology.healthmgr.mode", "cluster"),
    ({"heron.healthmgr.max.parallelism": 0}, "heron.healthmgr.max.parallelism", "1 or more"),
    ({"heron.healthmgr.max.actions.per.hour": "many"},
     "heron.healthmgr.max.actions.per.hour", "integer"),
    ({"heron.class.health.policies": 7}, "heron.class.health.policies", "list"),
    ({"heron.class.health.policies": [DRA, DRA]}, "heron.class.health.policies", "twice"),
    ({DRA: {"health.policy.interval.ms": "soon"}}, f"{DRA}.health.policy.interval.ms", "number"),
    ({DRA: {"health.policy.interval.ms": 0}}, f"{DRA}.health.policy.interval.ms", "greater"),
    ({f"{DRA}.health.policy.mode": "on"}, f"{DRA}.health.policy.mode", "activated"),
    ({DRA: {"BackPressureDetector.noiseFiltreMillis": 5}},
     f"{DRA}.BackPressureDetector.noiseFiltreMillis", "not a setting"),
    ({DRA: {"ProcessingRateSkewDetector.skewRatio": 0.5}},
     f"{DRA}.ProcessingRateSkewDetector.skewRatio", "ratio"),
    ({DRA: {"ScaleDownResolver.headroom": 1}}, f"{DRA}.ScaleDownResolver.headroom", "fraction"),
    ({DRA: {"ScaleDownResolver.allowKeyMoves": "maybe"}},
     f"{DRA}.ScaleDownResolver.allowKeyMoves", "true or false"),
    ({AUTO_RESTART: {"ScaleDownResolver.headroom": 0.2}},
     f"{AUTO_RESTART}.ScaleDownResolver.headroom", "not a setting"),
    ({"heron.class.health.policies": ["mine"]}, "mine.health.policy.class", "required"),
    ({"heron.class.health.policies": ["mine"], "mine": {"health.policy.class": "Magic"}},
     "mine.health.policy.class", "unknown policy class"),
    ({DRA: "fast"}, DRA, "mapping"),
    ({DRA: {"health.policy.mode": "activated"}, f"{DRA}.health.policy.mode": "deactivated"},
     f"{DRA}.health.policy.mode", "twice"),
    ({DRA: {"health.policy.post.action.wait.ms": 1000,
            "DynamicResourceAllocationPolicy.conf_post_action_wait_interval_min": 2000}},
     f"{DRA}.health.policy.post.action.wait.ms", "disagrees"),
])
def test_errors_name_the_key(config, key, words):
    with pytest.raises(HealthConfigError) as info:
        parse_health_config(config)
    assert info.value.key == key
    assert str(info.value).startswith(key + ":")
    assert words in str(info.value)


def test_runtime_toggle_reads_policy_id_colon_runtime():
    assert runtime_mode({f"{DRA}:runtime": "deactivated"}, DRA) is False
    assert runtime_mode({f"{DRA}:runtime": "activated"}, DRA) is True
    assert runtime_mode({}, DRA) is None
    with pytest.raises(HealthConfigError) as info:
        runtime_mode({f"{DRA}:runtime": "off"}, DRA)
    assert info.value.key == f"{DRA}:runtime"
