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
