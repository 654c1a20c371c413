"""``--out-tree DIR``: a complete migrated copy of a project, the input left untouched.

Everything is copied first, byte for byte (symlinks as symlinks, unparseable files as they
are), then only the changed files are replaced, so a file the migrator did not change is
identical in the copy: 2to3's ``-o`` once wrote ``Non`` into a copy of a file it could not
parse, which this order rules out.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Sequence

from migrate.errors import MigrationError
from migrate.files import atomic_write
from migrate.project import FileOutcome, Status


class OutTreeRefused(MigrationError):
    """The output directory exists, overlaps the input, or the input is not a directory."""


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
    """Copy ``source`` to ``out`` and write the migrated files there; returns what changed."""
    shutil.copytree(source, out, symlinks=True)
    written = []
    for outcome in outcomes:
        if outcome.status is Status.CHANGED:
            target = out / outcome.path.relative_to(source)
            atomic_write(target, outcome.migrated)
            written.append(target)
    return written
