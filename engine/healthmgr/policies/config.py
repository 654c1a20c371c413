"""Health Manager configuration, read from the topology config (a plain dict).

Heron's layout: ``heron.class.health.policies`` lists policy ids; each id's settings are
a mapping under that id (as in Heron's ``healthmgr.yaml``), or flat keys
``<policy-id>.<key>`` (what ``-o`` and a flat ``heron.yaml`` can hold). Keys are Heron's
where Heron has one. Values may be strings (the topology config travels as text).
Every error names the key, as the user wrote it, and what it accepts. The defaults and
the reason for each are in ``docs/health-manager.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from engine.common.plan.topology_config import HEALTHMGR_MODE, HealthModeError, healthmgr_mode_on
from engine.healthmgr.detectors.backpressure import DEFAULT_NOISE_FILTER_MS
from engine.healthmgr.detectors.over_provisioning import (
    DEFAULT_MIN_COVERAGE,
    DEFAULT_UTILISATION_LIMIT,
)
from engine.healthmgr.detectors.skew import DEFAULT_RATE_SKEW_RATIO, DEFAULT_WAIT_QUEUE_SKEW_RATIO
from engine.healthmgr.detectors.wait_queue import DEFAULT_GROWTH_LIMIT, DEFAULT_LARGE_LIMIT
from engine.healthmgr.errors import HealthConfigError
from engine.healthmgr.resolvers.scale_down import DEFAULT_HEADROOM
from engine.healthmgr.sensors import DEFAULT_DURATION_SECS

# -- topology-level keys ------------------------------------------------------------------
#: Heron's switch: ``cluster`` runs a Health Manager in container 0, ``disabled`` does not
#: Heron's list of policy ids
POLICIES = "heron.class.health.policies"
#: guard rail: no component is scaled above this many instances
MAX_PARALLELISM = "heron.healthmgr.max.parallelism"
#: guard rail: at most this many actions (applied or failed) in any 3600 s
MAX_ACTIONS_PER_HOUR = "heron.healthmgr.max.actions.per.hour"
#: suffix of Heron's run-time toggle key, ``<policy-id>:runtime`` = activated|deactivated
RUNTIME_SUFFIX = ":runtime"

#: each instance is an OS process; past 16 per bolt a topology wants more containers or a
#: faster bolt, which is a person's decision
DEFAULT_MAX_PARALLELISM = 16
#: with Heron's 180 s wait at most 20 actions fit in an hour; 6 allows a load step to be
#: followed up and back a few times, and stops a misconfigured policy from churning
DEFAULT_MAX_ACTIONS_PER_HOUR = 6

# -- policy keys ----------------------------------------------------------------------------
POLICY_CLASS = "health.policy.class"
POLICY_MODE = "health.policy.mode"
POLICY_INTERVAL = "health.policy.interval.ms"
#: this project's: the sensors' window, unless a ``<Sensor>.duration`` says otherwise
POLICY_WINDOW = "health.policy.window.ms"
#: this project's: the wait after any action, whatever the policy's class
POLICY_WAIT = "health.policy.post.action.wait.ms"
#: Heron's own wait keys (the first says ``_min`` but Heron reads milliseconds)
DRA_WAIT = "DynamicResourceAllocationPolicy.conf_post_action_wait_interval_min"
RESTART_WAIT = "AutoRestartBackpressureContainerPolicy.conf_post_action_wait_interval_ms"
SENSOR_DURATION = "{sensor}.duration"
SENSORS = ("BackPressureSensor", "BufferSizeSensor", "ExecuteCountSensor",
           "ExecuteLatencySensor")

DYNAMIC_RESOURCE_ALLOCATION = "dynamic-resource-allocation"
AUTO_RESTART = "auto-restart-backpressure-container"

#: Heron's policy intervals (60 s) and waits after an action (180 s)
DEFAULT_INTERVAL_MS = 60_000
DEFAULT_WAIT_MS = 180_000


class PolicyKind(str, Enum):
    DYNAMIC_RESOURCE_ALLOCATION = "DynamicResourceAllocationPolicy"
    AUTO_RESTART = "AutoRestartBackpressureContainerPolicy"


#: class names accepted for ``health.policy.class``: Heron's full Java names and short ones
_CLASSES = {f"org.apache.heron.healthmgr.policy.{k.value}": k for k in PolicyKind}
_CLASSES.update({k.value: k for k in PolicyKind})
#: ids whose class need not be given
_KNOWN_IDS = {DYNAMIC_RESOURCE_ALLOCATION: PolicyKind.DYNAMIC_RESOURCE_ALLOCATION,
              AUTO_RESTART: PolicyKind.AUTO_RESTART}


@dataclass(frozen=True)
class PolicyConfig:
    """One policy's settings, validated, in seconds and plain numbers."""

    id: str
    kind: PolicyKind
    activated: bool
    interval_secs: float
    wait_secs: float
    durations: Mapping[str, float]
    noise_filter_ms: float = DEFAULT_NOISE_FILTER_MS
    large_wait_queue_limit: float = DEFAULT_LARGE_LIMIT
    growing_wait_queue_limit: float = DEFAULT_GROWTH_LIMIT
    rate_skew_ratio: float = DEFAULT_RATE_SKEW_RATIO
    wait_queue_skew_ratio: float = DEFAULT_WAIT_QUEUE_SKEW_RATIO
    utilisation_limit: float = DEFAULT_UTILISATION_LIMIT
    min_coverage: float = DEFAULT_MIN_COVERAGE
    scale_down: bool = True
    headroom: float = DEFAULT_HEADROOM
    allow_key_moves: bool = False

    def duration(self, sensor: str) -> float:
        return self.durations[sensor]


@dataclass(frozen=True)
class HealthConfig:
    """Everything the Health Manager of one topology is told."""

    enabled: bool
    policies: tuple[PolicyConfig, ...] = ()
    max_parallelism: int = DEFAULT_MAX_PARALLELISM
    max_actions_per_hour: int = DEFAULT_MAX_ACTIONS_PER_HOUR


# -- value parsers ---------------------------------------------------------------------------
def _number(key: str, value: Any, *, integer: bool = False) -> float:
    if isinstance(value, bool):
        raise HealthConfigError(key, f"must be a number, got {value!r}")
    try:
        number = int(value) if integer and not isinstance(value, float) else float(value)
    except (TypeError, ValueError):
        kind = "an integer" if integer else "a number"
        raise HealthConfigError(key, f"must be {kind}, got {value!r}") from None
    if integer and number != int(number):
        raise HealthConfigError(key, f"must be an integer, got {value!r}")
    return number


def _positive(key: str, value: Any) -> float:
    number = _number(key, value)
    if number <= 0:
        raise HealthConfigError(key, f"must be greater than 0, got {value!r}")
    return number


def _non_negative(key: str, value: Any) -> float:
    number = _number(key, value)
    if number < 0:
        raise HealthConfigError(key, f"must be 0 or more, got {value!r}")
    return number


def _ratio(key: str, value: Any) -> float:
    number = _number(key, value)
    if number < 1:
        raise HealthConfigError(key, f"must be a ratio of 1 or more, got {value!r}")
    return number


def _fraction(key: str, value: Any) -> float:
    number = _number(key, value)
    if not 0 < number < 1:
        raise HealthConfigError(key, f"must be a fraction between 0 and 1, got {value!r}")
    return number


def _headroom(key: str, value: Any) -> float:
    number = _number(key, value)
    if not 0 <= number < 1:
        raise HealthConfigError(key, f"must be a fraction from 0 up to (not including) 1, "
                                f"got {value!r}")
    return number


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise HealthConfigError(key, f"must be true or false, got {value!r}")


def parse_mode(key: str, value: Any) -> bool:
    """``activated`` -> True, ``deactivated`` -> False (Heron's two policy modes)."""
    text = str(value).strip().lower()
    if text in ("activated", "deactivated"):
        return text == "activated"
    raise HealthConfigError(key, f"must be activated or deactivated, got {value!r}")


#: key -> (PolicyConfig field, parser) for the detector and resolver settings
_TUNING: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "BackPressureDetector.noiseFilterMillis": ("noise_filter_ms", _non_negative),
    "LargeWaitQueueDetector.limit": ("large_wait_queue_limit", _non_negative),
    "GrowingWaitQueueDetector.limit": ("growing_wait_queue_limit", _non_negative),
    "ProcessingRateSkewDetector.skewRatio": ("rate_skew_ratio", _ratio),
    "WaitQueueSkewDetector.skewRatio": ("wait_queue_skew_ratio", _ratio),
}
_DRA_TUNING: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "OverProvisioningDetector.limit": ("utilisation_limit", _fraction),
    "OverProvisioningDetector.minCoverage": ("min_coverage", _fraction),
    "DynamicResourceAllocationPolicy.scaleDown": ("scale_down", _bool),
    "ScaleDownResolver.headroom": ("headroom", _headroom),
    "ScaleDownResolver.allowKeyMoves": ("allow_key_moves", _bool),
}


def _allowed_keys(kind: PolicyKind) -> set[str]:
    keys = {POLICY_CLASS, POLICY_MODE, POLICY_INTERVAL, POLICY_WINDOW, POLICY_WAIT,
            *(SENSOR_DURATION.format(sensor=s) for s in SENSORS), *_TUNING}
    if kind is PolicyKind.DYNAMIC_RESOURCE_ALLOCATION:
        keys |= {DRA_WAIT, *_DRA_TUNING}
    else:
        keys.add(RESTART_WAIT)
    return keys


def _policy_settings(config: Mapping[str, Any], policy_id: str) -> dict[str, tuple[str, Any]]:
    """``{key: (key as the user wrote it, value)}`` from the nested and the flat form."""
    out: dict[str, tuple[str, Any]] = {}
    nested = config.get(policy_id)
    if nested is not None:
        if not isinstance(nested, Mapping):
            raise HealthConfigError(policy_id, "must be a mapping of the policy's settings, "
                                    f"got {type(nested).__name__}")
        for key, value in nested.items():
            out[str(key)] = (f"{policy_id}.{key}", value)
    prefix = policy_id + "."
    for key, value in config.items():
        if isinstance(key, str) and key.startswith(prefix):
            short = key[len(prefix):]
            if short in out and out[short][1] != value:
                raise HealthConfigError(key, f"is given twice with different values, under "
                                        f"{policy_id!r} and as a flat key")
            out[short] = (key, value)
    return out


def _policy_ids(config: Mapping[str, Any]) -> list[str]:
    raw = config.get(POLICIES)
    if raw is None:
        return [DYNAMIC_RESOURCE_ALLOCATION, AUTO_RESTART]
    if isinstance(raw, str):
        ids = [p.strip() for p in raw.split(",") if p.strip()]
    elif isinstance(raw, (list, tuple)):
        ids = [str(p).strip() for p in raw]
    else:
        raise HealthConfigError(POLICIES, f"must be a list of policy ids, got {raw!r}")
    if any(not p or ":" in p for p in ids):
        raise HealthConfigError(POLICIES, f"policy ids must be non-empty and without ':', "
                                f"got {ids!r}")
    if len(set(ids)) != len(ids):
        raise HealthConfigError(POLICIES, f"lists a policy id twice: {ids!r}")
    return ids


def parse_policy(config: Mapping[str, Any], policy_id: str) -> PolicyConfig:
    """One policy's settings from the topology config."""
    settings = _policy_settings(config, policy_id)
    if POLICY_CLASS in settings:
        written, value = settings[POLICY_CLASS]
        kind = _CLASSES.get(str(value).strip())
        if kind is None:
            raise HealthConfigError(written, f"unknown policy class {value!r}; known: "
                                    f"{', '.join(sorted(k.value for k in PolicyKind))}")
    elif policy_id in _KNOWN_IDS:
        kind = _KNOWN_IDS[policy_id]
    else:
        raise HealthConfigError(f"{policy_id}.{POLICY_CLASS}", "is required for a policy id "
                                f"other than {', '.join(sorted(_KNOWN_IDS))}")
    allowed = _allowed_keys(kind)
    for key, (written, _) in sorted(settings.items()):
        if key not in allowed:
            raise HealthConfigError(written, f"is not a setting of {kind.value}; known: "
                                    f"{', '.join(sorted(allowed))}")

    def get(key: str, parser: Callable[[str, Any], Any], default: Any) -> Any:
        if key not in settings:
            return default
        written, value = settings[key]
        return parser(written, value)

    # Heron ships its auto-restart policy deactivated: a restart cuts in-flight tuples
    activated = get(POLICY_MODE, parse_mode, kind is not PolicyKind.AUTO_RESTART)
    interval = get(POLICY_INTERVAL, _positive, DEFAULT_INTERVAL_MS) / 1000.0
    window = get(POLICY_WINDOW, _positive, DEFAULT_DURATION_SECS * 1000.0) / 1000.0
    durations = {s: get(SENSOR_DURATION.format(sensor=s), _positive, window) for s in SENSORS}
    heron_wait = DRA_WAIT if kind is PolicyKind.DYNAMIC_RESOURCE_ALLOCATION else RESTART_WAIT
    if (POLICY_WAIT in settings and heron_wait in settings
            and _non_negative(*settings[POLICY_WAIT]) != _non_negative(*settings[heron_wait])):
        raise HealthConfigError(settings[POLICY_WAIT][0], f"disagrees with "
                                f"{settings[heron_wait][0]}; give one of them")
    wait = get(POLICY_WAIT, _non_negative, get(heron_wait, _non_negative, DEFAULT_WAIT_MS))
    tuning = {name: get(key, parser, None) for key, (name, parser) in
              {**_TUNING, **(_DRA_TUNING if kind is PolicyKind.DYNAMIC_RESOURCE_ALLOCATION
                             else {})}.items()}
    return PolicyConfig(policy_id, kind, activated, interval, wait / 1000.0, durations,
                        **{k: v for k, v in tuning.items() if v is not None})


def healthmgr_enabled(config: Mapping[str, Any]) -> bool:
    """Whether ``heron.topology.healthmgr.mode`` asks for a Health Manager (``cluster``)."""
    try:
        return healthmgr_mode_on(config)
    except HealthModeError as exc:
        raise HealthConfigError(HEALTHMGR_MODE, str(exc)) from None


def parse_health_config(config: Mapping[str, Any]) -> HealthConfig:
    """The whole Health Manager configuration of a topology, validated."""
    enabled = healthmgr_enabled(config)
    max_parallelism = int(_number(MAX_PARALLELISM, config.get(MAX_PARALLELISM,
                                                              DEFAULT_MAX_PARALLELISM),
                                  integer=True))
    if max_parallelism < 1:
        raise HealthConfigError(MAX_PARALLELISM, f"must be 1 or more, got {max_parallelism}")
    per_hour = int(_number(MAX_ACTIONS_PER_HOUR,
                           config.get(MAX_ACTIONS_PER_HOUR, DEFAULT_MAX_ACTIONS_PER_HOUR),
                           integer=True))
    if per_hour < 0:
        raise HealthConfigError(MAX_ACTIONS_PER_HOUR, f"must be 0 or more, got {per_hour}")
    policies = tuple(parse_policy(config, p) for p in _policy_ids(config))
    return HealthConfig(enabled, policies, max_parallelism, per_hour)


def runtime_mode(config: Mapping[str, Any], policy_id: str) -> bool | None:
    """The run-time toggle ``<policy-id>:runtime`` in the topology config now: True
    (activated), False (deactivated) or None (not set)."""
    key = policy_id + RUNTIME_SUFFIX
    if key not in config:
        return None
    return parse_mode(key, config[key])


__all__ = ["HealthConfig", "PolicyConfig", "PolicyKind", "parse_health_config",
           "parse_policy", "runtime_mode", "healthmgr_enabled"]
