"""The Health Manager's one exception: a configuration the user must fix."""

from __future__ import annotations


class HealthConfigError(ValueError):
    """A Health Manager setting is invalid; the message names the key and what it accepts."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        #: the full key as the user wrote it (``<policy-id>.<key>`` inside a policy)
        self.key = key
