"""How many key groups a topology's keyed state is split into
(``topology.stateful.key.groups``): read by the Topology Master, the Stream Managers, the
instances, the storm engine and the submitter's checks, so they all split keys the same
way. What a key group is, and who owns it, is engine/common/grouping/key_groups.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.config.errors import ConfigError
from engine.config.keys import KEY_GROUPS_KEY

#: Flink's default maximum parallelism; enough for a 2-core machine and far beyond
DEFAULT_KEY_GROUPS = 128
#: the most key groups a topology may have
MAX_KEY_GROUPS = 65536


class KeyGroupError(ConfigError):
    """A key-group setting or a parallelism it cannot serve; the message names it."""


def key_groups(conf: Mapping[str, Any]) -> int:
    """``topology.stateful.key.groups``: a whole number from 1 to 65536 (default 128)."""
    value = conf.get(KEY_GROUPS_KEY, DEFAULT_KEY_GROUPS)
    if isinstance(value, bool) or not isinstance(value, int) or \
            not 1 <= value <= MAX_KEY_GROUPS:
        raise KeyGroupError(f"{KEY_GROUPS_KEY} must be a whole number from 1 to "
                            f"{MAX_KEY_GROUPS}, got {value!r}")
    return value
