"""Migrate every Python file under a path and say, per file, what happened."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from migrate.errors import MigrationError, RuleCrashed, SourceUnparseable
from migrate.files import iter_linked_dirs, iter_python_files, read_source
from migrate.findings import Finding, Level
from migrate.outcome import FileOutcome, Status
from migrate.rules.base import Rule
from migrate.rules.flux import FLUX_SUFFIXES
from migrate.transform import transform_source


def migrate_file(path: Path, rules: Sequence[type[Rule]], display: str,
                 unsafe: bool = False) -> FileOutcome:
    """Migrate one file in memory; failures become a FAILED outcome, never an exception.

    A symlinked file is left alone: rewriting it would either replace the link with a
    plain file or change a file outside the project.
    """
    if path.is_symlink():
        return FileOutcome(path, Status.UNCHANGED, findings=[Finding(
            path=display, line=0, col=0, level=Level.WARNING, rule_id="files",
            message="symlink not followed; migrate the file it points to separately",
            manual=f"run heron-migrate on {_resolved(path)} if it belongs to this project")])
    try:
        original = read_source(path, display)
        result = transform_source(original, display, rules, unsafe=unsafe)
    except RuleCrashed as exc:
        return FileOutcome(path, Status.FAILED, error=str(exc), detail=exc.traceback_text)
    except SourceUnparseable as exc:
        return FileOutcome(path, Status.FAILED, error=str(exc), hint=exc.hint)
    except MigrationError as exc:
        return FileOutcome(path, Status.FAILED, error=str(exc))
    status = Status.CHANGED if result.code != original else Status.UNCHANGED
    return FileOutcome(path, status, original, result.code, result.findings)


def _resolved(link: Path) -> str:
    """Where a symlink ends up, or what it says when that cannot be worked out (a loop)."""
    try:
        return str(link.resolve())
    except (OSError, RuntimeError):
        return os.readlink(link)


def linked_dir_outcome(link: Path, display: str) -> FileOutcome:
    """A WARNING for a symlinked folder: the walk does not enter it (it may loop, or lead
    out of the project), so its files are not migrated here and a person must know."""
    return FileOutcome(link, Status.UNCHANGED, findings=[Finding(
        path=display, line=0, col=0, level=Level.WARNING, rule_id="files",
        message=f"symlinked folder not followed: {display} -> {os.readlink(link)}; "
                "its files are not migrated",
        manual=f"migrate {_resolved(link)} by hand, or run heron-migrate on it separately, "
               "unless it is already part of this project")])


def migrate_tree(root: Path, rules: Sequence[type], unsafe: bool = False, jobs: int = 1,
                 progress: Callable[[FileOutcome], None] | None = None,
                 options: Mapping[str, Any] | None = None) -> list[FileOutcome]:
    """Source rules over every Python file, then project rules (config...) over ``root``.

    ``options`` are CLI settings for project rules (``--filter`` for ``flux``): each rule
    gets those named in its ``OPTIONS``, so a rule that takes none is built as before.
    """
    code_rules = [r for r in rules if isinstance(r, type) and issubclass(r, Rule)]
    outcomes = _migrate_sources(root, code_rules, unsafe, jobs, progress)
    for rule in rules:
        if rule not in code_rules:
            wanted = {k: v for k, v in (options or {}).items()
                      if k in getattr(rule, "OPTIONS", ()) and v is not None}
            outcomes.extend(rule(**wanted).apply(root))
    return outcomes


def _migrate_sources(root: Path, rules: Sequence[type[Rule]], unsafe: bool, jobs: int,
                     progress: Callable[[FileOutcome], None] | None) -> list[FileOutcome]:
    """Outcomes for every Python file under ``root`` (or ``root`` itself), in path order,
    then a warning for each symlinked folder the walk did not enter.

    With ``jobs > 1`` files are migrated in a spawn pool: forking a process that runs a
    progress thread can deadlock; spawned workers start fresh and exit with the pool
    (a forkserver would outlive the run).
    """
    base = root if root.is_dir() else root.parent
    if not root.is_dir() and root.suffix.lower() in FLUX_SUFFIXES:
        return []  # a Flux file given as PATH: the flux rule reads it, not the Python pass
    paths = list(iter_python_files(root))
    links = [linked_dir_outcome(p, str(p.relative_to(base))) for p in iter_linked_dirs(root)]
    work = [(p, rules, str(p.relative_to(base)), unsafe) for p in paths]
    if jobs <= 1 or len(paths) <= 1:
        outcomes = []
        for args in work:
            outcomes.append(migrate_file(*args))
            if progress:
                progress(outcomes[-1])
        return outcomes + links
    context = multiprocessing.get_context("spawn")
    results: dict[Path, FileOutcome] = {}
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [pool.submit(migrate_file, *args) for args in work]
        for future in as_completed(futures):
            outcome = future.result()
            results[outcome.path] = outcome
            if progress:
                progress(outcome)
    return [results[p] for p in paths] + links
