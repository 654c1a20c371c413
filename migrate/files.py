"""Finding the Python files of a project, reading them safely and writing them atomically."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Iterator

from migrate.errors import SourceUnreadable

# Directories that hold build output, caches or installed packages, not project sources.
SKIP_DIRS = frozenset({"__pycache__", "_build", "_resources", "node_modules", "site-packages",
                       "logs"})


def iter_python_files(root: Path) -> Iterator[Path]:
    """``root`` itself if it is a file, else its ``*.py`` files in a stable order.

    Symlinked directories are not followed, so a link loop cannot make the walk endless.
    """
    if not root.is_dir():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS
                             and not (here / d / "pyvenv.cfg").exists())
        for name in sorted(filenames):
            if name.endswith(".py"):
                yield here / name


def read_source(path: Path, display: str | None = None) -> str:
    """The file's text; a file that cannot be read or is not UTF-8 raises SourceUnreadable.

    ``display`` is the name used in messages (the path relative to the project).
    """
    name = display or str(path)
    try:
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
    keeping the file's mode, so a crash never leaves a half-written source."""
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
