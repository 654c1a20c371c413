"""What a rule tells the user: one finding per rewrite or per thing a person must do.

Kept apart from the rules so the CLI and, later, the report writers depend on one small
data model rather than on libcst.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import Any


class Level(str, enum.Enum):
    """How much attention a finding needs: INFO is done, WARNING should be read, ERROR needs a
    person."""

    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"


@dataclass(frozen=True)
class Finding:
    """One located observation, shaped like a tf_upgrade_v2 report line plus its detail."""

    path: str
    line: int
    col: int
    level: Level
    rule_id: str
    message: str
    old: str = ""
    new: str = ""
    manual: str = ""

    def headline(self) -> str:
        """``path:line:col: LEVEL [rule] message``: the one-line form the CLI prints."""
        return (f"{self.path}:{self.line}:{self.col}: "
                f"{self.level.value} [{self.rule_id}] {self.message}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the level as its name)."""
        data = asdict(self)
        data["level"] = self.level.value
        return data
