"""Finding the files of a project, reading them safely and writing them atomically."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from migrate.errors import SourceUnreadable

# Directories that hold build output, caches, logs, installed packages or virtual
# environments, not project sources. Hidden directories (.git, .venv, .tox...) and any
# directory with a pyvenv.cfg are skipped as well; see ``_skipped``.
SKIP_DIRS = frozenset({"__pycache__", "_build", "_resources", "node_modules", "site-packages",
                       "logs", "venv", "virtualenvs"})


def _skipped(parent: Path, name: str) -> bool:
    """Whether the directory ``parent/name`` is noise rather than project source."""
    return name.startswith(".") or name in SKIP_DIRS or (parent / name / "pyvenv.cfg").exists()


def _walk(root: Path) -> Iterator[tuple[Path, list[str], list[str]]]:
    """``(folder, symlinked folder names, file names)`` for every folder the walk enters,
    sorted, noise pruned. Symlinked folders are named but never entered, so a link loop
    cannot make the walk endless and nothing outside the project is read by accident."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        kept = sorted(d for d in dirnames if not _skipped(here, d))
        dirnames[:] = [d for d in kept if not (here / d).is_symlink()]
        yield here, [d for d in kept if (here / d).is_symlink()], sorted(filenames)


def iter_project_files(root: Path) -> Iterator[Path]:
    """``root`` itself if it is a file, else every file under it (symlinked files included,
    symlinked folders not entered) in a stable order, noise directories skipped.

    The one walker every rule shares, so they all see the same files.
    """
    if not root.is_dir():
        yield root
        return
    for here, _links, filenames in _walk(root):
        for name in filenames:
            yield here / name


def iter_python_files(root: Path) -> Iterator[Path]:
    """``root`` itself if it is a file, else its ``*.py`` files in a stable order."""
    if not root.is_dir():
        yield root
        return
    for path in iter_project_files(root):
        if path.name.endswith(".py"):
            yield path


def iter_linked_dirs(root: Path) -> Iterator[Path]:
    """The symlinked folders under ``root`` that the walk does not enter, so they can be
    reported rather than skipped silently."""
    if not root.is_dir():
        return
    for here, links, _filenames in _walk(root):
        for name in links:
            yield here / name


def read_source(path: Path, display: str | None = None) -> str:
    """The file's text; a file that cannot be read, is not a regular file or is not UTF-8
    raises SourceUnreadable.

    ``display`` is the name used in messages (the path relative to the project). A named
    pipe or device is refused before it is opened: reading a FIFO waits for a writer forever.
    """
    name = display or str(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise SourceUnreadable(f"{name}: not a regular file; not touched")
        data = path.read_bytes()
    except OSError as exc:
        raise SourceUnreadable(f"{name}: cannot read: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceUnreadable(f"{name}: not UTF-8 (byte {exc.start}); not touched, "
                               "convert it to UTF-8 and run again") from exc


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` via a temp file in the same directory and a rename,
    keeping the file's mode, so a crash never leaves a half-written source.

    A new file's missing folders are made (a Flux-only project has no ``topologies/``
    for the topology file written from its YAML)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
    else:  # a new file gets the usual mode under the current umask
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
