"""The migration report, tf_upgrade_v2 style: a summary, then every finding with its
location, old and new text and what a person must do; the same content as JSON.

A file, not just terminal output, so a reviewer can read what changed after the run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from migrate.findings import Level
from migrate.project import FileOutcome, Status

_SEVERITY = (Status.UNCHANGED, Status.CHANGED, Status.FAILED)


def distinct_files(outcomes: Sequence[FileOutcome]) -> list[FileOutcome]:
    """One outcome per distinct file, in first-seen order, so counts are of files, not results.

    A file can have several outcomes (the Python pass and the ``cli`` rule both read
    ``fabfile.py``): the most severe one stands for it. The input a new file is made from
    (``config.json`` for ``heron.yaml``) was read too, so it is a scanned, unchanged file.
    """
    chosen: dict[Path, FileOutcome] = {}
    for outcome in outcomes:
        known = chosen.get(outcome.path)
        if known is None or _SEVERITY.index(outcome.status) > _SEVERITY.index(known.status):
            chosen[outcome.path] = outcome
        if outcome.source is not None and outcome.source not in chosen:
            chosen[outcome.source] = FileOutcome(outcome.source, Status.UNCHANGED)
    return list(chosen.values())


def summary(outcomes: Sequence[FileOutcome]) -> dict[str, int]:
    """Counts of distinct input files scanned, changed, unchanged and failed, of new files
    created, and of findings per level.

    ``scanned`` counts existing files only; a new file (heron.yaml, requirements.txt) is
    ``created``, or ``failed`` when it could not be written.
    """
    files = distinct_files(outcomes)
    inputs = [f for f in files if not f.created]
    counts = {"scanned": len(inputs)}
    for status in Status:
        counts[status.value] = sum(f.status is status for f in inputs)
    counts["failed"] += sum(f.created and f.status is Status.FAILED for f in files)
    counts["created"] = sum(f.created and f.status is not Status.FAILED for f in files)
    for level in Level:
        counts[level.value.lower()] = sum(f.level is level for o in outcomes for f in o.findings)
    return counts


def _created_line(outcomes: Sequence[FileOutcome], root: Path) -> str:
    """``Created N new files: a, b.``, naming them, since a reviewer looks for new files."""
    base = root if root.is_dir() else root.parent
    names = [str(f.path.relative_to(base)) for f in distinct_files(outcomes)
             if f.created and f.status is not Status.FAILED]
    return f"Created {len(names)} new files" + (f": {', '.join(names)}." if names else ".")


def render_text(outcomes: Sequence[FileOutcome], root: Path) -> str:
    """The human report."""
    s = summary(outcomes)
    attention = s["warning"] + s["error"]
    lines = [
        "heron-migrate report",
        "=" * 20,
        f"Scanned {s['scanned']} files: {s['changed']} changed, {s['unchanged']} unchanged, "
        f"{s['failed']} failed to parse or read.",
        _created_line(outcomes, root),
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
    """The machine-readable report: summary, per-file status (each file once), findings."""
    base = root if root.is_dir() else root.parent
    files: list[dict[str, Any]] = [
        {"path": str(o.path.relative_to(base)), "status": o.status.value, "created": o.created,
         "error": o.error, "hint": o.hint} for o in distinct_files(outcomes)]
    data = {"summary": summary(outcomes), "files": files,
            "findings": [f.to_dict() for o in outcomes for f in o.findings]}
    return json.dumps(data, indent=2) + "\n"
