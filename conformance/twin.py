"""Migrated twins: a project's ``heron-migrate`` copy, run beside the project itself.

``heron-conformance migrate`` compares a streamparse project with its migrated copy; a
catalogue case with ``twin="heronpy"`` does the same for a heronpy project and its
``heron-migrate --heronpy`` copy, on every engine the suite runs. The copy is written once
per case into the report directory (``migrated/<case>/``, with what the migration
reported in ``migrated/<case>.txt``), and each engine runs it as ``ENGINE:migrated``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from conformance.catalogue.case import Case
from conformance.engines import EngineAdapter, HarnessError

#: the directory of the report that holds the twins
MIGRATED = "migrated"


def migrated_copy(project: Path, out: Path, *, heronpy: bool = False) -> list[str]:
    """``heron-migrate --out-tree`` (``--heronpy`` too when ``heronpy``): write the
    migrated copy of ``project`` to ``out``.

    Returns what the migration reported (changed files, findings that need a person);
    a file that fails to migrate, or an ``out`` that exists or overlaps the project,
    is a :class:`HarnessError`."""
    # deferred: start-up time (the migrator's libcst takes ~1 s to import; only --migrate needs it)
    from migrate.findings import Level
    from migrate.out_tree import OutTreeRefused, check_out_tree, write_out_tree
    from migrate.project import Status, migrate_tree
    from migrate.rules import select_rules

    project, out = Path(project), Path(out)
    try:
        check_out_tree(project, out)
    except OutTreeRefused as exc:
        raise HarnessError(f"cannot write the migrated copy: {exc} (choose a --report "
                           "directory outside the project)") from None
    outcomes = migrate_tree(project, select_rules(heronpy=heronpy))
    failed = [o for o in outcomes if o.status is Status.FAILED]
    if failed:
        raise HarnessError("heron-migrate could not migrate " + "; ".join(
            str(o.error) for o in failed))
    write_out_tree(project, out, outcomes)
    notes = [f"migrated {o.path.relative_to(project)}" for o in outcomes
             if o.status is Status.CHANGED]
    notes += [f.headline() for o in outcomes for f in o.findings if f.level is not Level.INFO]
    return notes


def twin_runs(adapters: Sequence[EngineAdapter], case: Case,
              report_dir: Path) -> tuple[list[EngineAdapter], str | None]:
    """The adapters that run ``case``'s twin (``ENGINE:migrated``, one per engine), and
    why they cannot (the migration failed) or None. The copy is made on the first call
    for the case and reused by repeats."""
    out = Path(report_dir) / MIGRATED / case.name
    notes_file = out.parent / f"{case.name}.txt"
    twins = [adapter.for_project(f"{adapter.name}:migrated", out) for adapter in adapters]
    if notes_file.exists() and out.exists():
        return twins, None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        notes = migrated_copy(case.project, out, heronpy=case.twin == "heronpy")
    except (HarnessError, OSError) as exc:
        return twins, f"case {case.name}: its migrated twin cannot be made: {exc}"
    notes_file.write_text("".join(n + "\n" for n in [f"migrated copy: {out}", *notes]),
                          encoding="utf-8")
    return twins, None
