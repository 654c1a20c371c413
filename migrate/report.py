"""The migration report, tf_upgrade_v2 style: a summary, then every finding with its
location, old and new text and what a person must do; the same content as JSON.

A file, not just terminal output, so a reviewer can read what changed after the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from migrate.findings import Level
from migrate.project import FileOutcome, Status


def summary(outcomes: Sequence[FileOutcome]) -> dict[str, int]:
    """Counts of files scanned, changed, unchanged and failed, and findings per level."""
    counts = {"scanned": len(outcomes)}
    for status in Status:
        counts[status.value] = sum(o.status is status for o in outcomes)
    for level in Level:
        counts[level.value.lower()] = sum(f.level is level for o in outcomes for f in o.findings)
    return counts


def render_text(outcomes: Sequence[FileOutcome], root: Path) -> str:
    """The human report."""
    s = summary(outcomes)
    attention = s["warning"] + s["error"]
    lines = [
        "heron-migrate report",
        "=" * 20,
        f"Scanned {s['scanned']} files: {s['changed']} changed, {s['unchanged']} unchanged, "
        f"{s['failed']} failed to parse or read.",
        f"Detected {attention} issues that require attention ({s['error']} errors, "
        f"{s['warning']} warnings).",
        "",
    ]
    failed = [o for o in outcomes if o.status is Status.FAILED]
    if failed:
        lines.append("Failed files (left unchanged):")
        for outcome in failed:
            lines.append(f"  {outcome.error}")
            if outcome.hint:
                lines.append(f"    hint: {outcome.hint}")
        lines.append("")
    lines.append("Findings:")
    for outcome in outcomes:
        for finding in outcome.findings:
            lines.append(finding.headline())
            if finding.old:
                lines.append(f"    old: {finding.old}")
            if finding.new:
                lines.append(f"    new: {finding.new}")
            if finding.manual:
                lines.append(f"    to do: {finding.manual}")
    return "\n".join(lines) + "\n"


def render_json(outcomes: Sequence[FileOutcome], root: Path) -> str:
    """The machine-readable report: summary, per-file status, findings."""
    base = root if root.is_dir() else root.parent
    files: list[dict[str, Any]] = [
        {"path": str(o.path.relative_to(base)), "status": o.status.value, "error": o.error,
         "hint": o.hint} for o in outcomes]
    data = {"summary": summary(outcomes), "files": files,
            "findings": [f.to_dict() for o in outcomes for f in o.findings]}
    return json.dumps(data, indent=2) + "\n"
