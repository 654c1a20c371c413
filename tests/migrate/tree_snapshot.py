"""One helper for "the input tree is byte-identical afterwards": every path under a root
with its kind and content (file bytes, symlink target), symlinks never followed."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def snapshot(root: Path) -> dict[str, tuple[str, bytes | str]]:
    """``{relative path: (kind, content)}``: ``("file", bytes)``, ``("link", target)``,
    ``("dir", "")`` or ``("other", "")`` for a named pipe or device (never opened).

    Walks with ``os.walk(followlinks=False)``, so a symlink loop is recorded, not entered.
    """
    found: dict[str, tuple[str, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                entry: tuple[str, bytes | str] = ("link", os.readlink(path))
            elif stat.S_ISDIR(mode):
                entry = ("dir", "")
            elif stat.S_ISREG(mode):
                entry = ("file", path.read_bytes())
            else:
                entry = ("other", "")
            found[str(path.relative_to(root))] = entry
    return dict(sorted(found.items()))

