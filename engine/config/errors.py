"""The one error a bad configuration value raises, wherever it is read."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration value is invalid; the message names the key."""
