"""``--out-tree DIR``: a complete migrated copy of a project, the input left untouched.

Everything is copied first, byte for byte (symlinks as symlinks, unparseable files as they
are), then only the changed files are replaced, so a file the migrator did not change is
identical in the copy: 2to3's ``-o`` once wrote ``Non`` into a copy of a file it could not
parse, which this order rules out.

The copy is built in a hidden staging folder next to DIR and renamed to DIR only once it
is complete. A file that cannot be copied (unreadable, a named pipe) would make the copy
incomplete, silently losing that file, so the whole copy is dropped instead: DIR is either
the complete migrated project or absent, never half written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from migrate.errors import MigrationError
from migrate.files import atomic_write
from migrate.project import FileOutcome, Status


class OutTreeRefused(MigrationError):
    """The output directory exists, overlaps the input, or the input is not a directory."""


class OutTreeFailed(MigrationError):
    """The copy could not be completed; nothing was left at the output directory."""


def check_out_tree(source: Path, out: Path) -> None:
    """Refuse an out-tree that exists or overlaps the source, before any work is done."""
    if not source.is_dir():
        raise OutTreeRefused(f"--out-tree needs a project directory, {source} is a file")
    if out.exists() or out.is_symlink():
        raise OutTreeRefused(f"--out-tree {out} exists; choose a new directory")
    src, dst = source.resolve(), out.resolve()
    if dst == src or src in dst.parents or dst in src.parents:
        raise OutTreeRefused(f"--out-tree {out} overlaps the project {source}; "
                             "choose a directory outside it")


def write_out_tree(source: Path, out: Path, outcomes: Sequence[FileOutcome]) -> list[Path]:
    """Copy ``source`` to ``out`` and write the migrated files there; returns what changed.

    Raises OutTreeFailed (or OSError) with ``out`` and any folders made for it removed.
    """
    made = _make_parents(out.parent)
    staging: Path | None = None
    try:
        staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.",
                                        suffix=".partial"))
        tree = staging / out.name
        _copy(source, tree)
        changed = [o for o in outcomes if o.status is Status.CHANGED]
        for outcome in changed:
            atomic_write(tree / outcome.path.relative_to(source), outcome.migrated)
        if out.exists() or out.is_symlink():
            raise OutTreeFailed(f"{out} was created by something else during the run")
        os.rename(tree, out)
    except BaseException:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        for folder in made:
            _rmdir_quietly(folder)
        raise
    staging.rmdir()
    return [out / o.path.relative_to(source) for o in changed]


def _copy(source: Path, tree: Path) -> None:
    """``shutil.copytree`` with symlinks kept; every file it could not copy is named."""
    try:
        shutil.copytree(source, tree, symlinks=True)
    except shutil.Error as exc:
        problems = [f"{_relative(src, source)} ({why})" for src, _dst, why in exc.args[0]]
        raise OutTreeFailed("cannot copy " + "; ".join(problems)) from exc
    except OSError as exc:
        raise OutTreeFailed(f"cannot copy {source}: {exc}") from exc


def _relative(path: str, source: Path) -> str:
    try:
        return str(Path(path).relative_to(source))
    except ValueError:
        return path


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; returns the ones made, deepest first."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def _rmdir_quietly(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass
