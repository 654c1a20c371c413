"""What happened to one file: the data the CLI, reports and --out-tree share."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from migrate.findings import Finding


class Status(str, enum.Enum):
    """Outcome of one file."""

    UNCHANGED = "unchanged"
    CHANGED = "changed"
    FAILED = "failed"


@dataclass
class FileOutcome:
    """One file's result: its old and new text (when readable), findings, or the failure."""

    path: Path
    status: Status
    original: str = ""
    migrated: str = ""
    findings: list[Finding] = field(default_factory=list)
    error: str = ""
    hint: str = ""
    detail: str = ""
    created: bool = False  # a new file (heron.yaml), not a rewrite
    # The input a new file is made from (config.json for heron.yaml): it was read, so the
    # report counts it as scanned even though it has no outcome of its own.
    source: Path | None = None
