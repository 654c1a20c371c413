"""Writes that survive an OS crash (power loss, a kernel panic), not only a process crash.

A rename makes a file appear whole under its name, but only in the page cache: after an
OS crash the name can point at a file whose data never reached the disk, or the rename
itself can be gone. So, for anything the engine publishes (a checkpoint's files, a
savepoint and its ``savepoint.json``, the local state manager's nodes, among them the
record of the consistent checkpoints):

1. every file is written and fsynced before the rename that publishes it;
2. the directory holding the new name is fsynced after that rename;
3. a directory made on the way is made durable in its parent (its parent fsynced).

A file system that cannot fsync a directory (``EINVAL``: some network and FUSE file
systems) is left at that: there is nothing more to do there.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from engine.common.security.private import private_dir

__all__ = ["fsync_dir", "fsync_file", "fsync_tree", "private_dirs", "publish",
           "write_file"]

#: a directory fsync the file system does not do: nothing more can be asked of it
_NOT_SUPPORTED = {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP}


def fsync_file(path: Path | str) -> None:
    """Flush the file at ``path`` (its data and size) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path | str) -> None:
    """Flush the directory ``path`` (the names in it: a rename, a new file or
    directory) to the disk."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _NOT_SUPPORTED:
            raise
    finally:
        os.close(fd)


def write_file(path: Path | str, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` as the whole file ``path`` (made ``mode``), fsynced before it is
    closed. The caller publishes it (``publish``), or it is inside a directory that is
    published whole."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def publish(tmp: Path | str, target: Path | str) -> None:
    """Rename ``tmp`` (a file or directory already fsynced) to ``target`` and make the
    rename durable: ``target``'s directory is fsynced after it."""
    os.replace(tmp, target)
    fsync_dir(Path(target).parent)


def fsync_tree(root: Path | str) -> None:
    """Fsync every file and directory under ``root`` (``root`` too), each directory after
    what is in it: a copied tree, before the rename that publishes it."""
    for here, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            fsync_file(os.path.join(here, name))
        fsync_dir(here)


def private_dirs(*paths: Path | str) -> Path:
    """``private_dir`` each of ``paths`` in turn (each the parent of the next); one that
    is made here is made durable in its parent. Returns the last."""
    made = Path()
    for path in paths:
        made = Path(path)
        existed = made.is_dir()
        private_dir(made)
        if not existed:
            fsync_dir(made.parent)
    return made
