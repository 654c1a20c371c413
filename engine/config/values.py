"""Checks shared by the config readers: each returns the value or raises ``ConfigError``
with one line naming the key and the value it got."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.config.errors import ConfigError


def non_negative_or_none(conf: Mapping[str, Any], key: str) -> int | None:
    """An optional count (None when unset); negative or non-numbers are refused."""
    value = conf.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(f"{key} must be a non-negative number, got {value!r}")
    return int(value)


def positive(conf: Mapping[str, Any], key: str, default: float) -> float:
    """A positive number, ``default`` when unset or None."""
    value = conf.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{key} must be a positive number, got {value!r}")
    return float(value)


def path_or_none(conf: Mapping[str, Any], key: str) -> str | None:
    """A directory path, None when unset or empty."""
    value = conf.get(key)
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a directory path, got {value!r}")
    return value


def whole_at_least(conf: Mapping[str, Any], key: str, minimum: int, default: int) -> int:
    """A whole number of at least ``minimum`` (``5.0`` is 5), ``default`` when unset or None."""
    value = conf.get(key)
    if value is None:
        return default
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or (isinstance(value, float) and not value.is_integer()) or value < minimum):
        raise ConfigError(f"{key} must be a whole number of at least {minimum}, got {value!r}")
    return int(value)


def flag(conf: Mapping[str, Any], key: str, default: bool) -> bool:
    """True or false (YAML and JSON give booleans), ``default`` when unset or None."""
    value = conf.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be true or false, got {value!r}")
    return value
