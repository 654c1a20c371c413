"""A container's log files: which exist, and reading part of one without being fooled.

Every engine process writes ``<working dir>/logs/<process name>.log`` (instances
``container_<c>_<component>_<task>.log``, ``stmgr-<c>.log``, ``heron-tmanager.log``...).
The tracker reads a local topology's folder with these functions and a container's shell
reads its own with them, so the rules are the same wherever a file is served
(docs/security.md, "Tracker logs"):

only regular files directly inside that logs folder are listed or served: a name with a
separator or ``..``, an absolute path, a symbolic link (even to a file inside the
folder), a directory, a FIFO or a device is refused, a logs folder that is itself a
symbolic link serves nothing, and a file is opened without following links and checked
again once open, so swapping it for a link between the listing and the read gains
nothing.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

#: what a log file name may look like (no separators, no leading dot)
LOG_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*\.log$")
#: the most lines one request may ask for
MAX_LINES = 10_000
#: the most bytes one read returns (a follower asks again from where it stopped)
MAX_READ_BYTES = 1 << 20


class LogNameRefused(ValueError):
    """The name asked for is a path or not a log file name; the text says which."""


class LogFileMissing(LookupError):
    """No regular log file of that name; the text names what is there instead."""


@dataclass
class LogFile:
    name: str
    path: Path
    size: int
    mtime: float
    #: the instance, Stream Manager or process the file belongs to (its stem)
    owner: str
    container: int | None


def container_of(stem: str) -> int | None:
    """The container a log file's process belongs to, from its name."""
    match = re.match(r"^(?:container_(\d+)_|(?:stmgr|metricsmgr|executor)-(\d+)$)", stem)
    if match is None:
        return 0 if stem == "heron-tmanager" else None
    return int(match.group(1) or match.group(2))


def logs_folder(directory: Path | None) -> Path | None:
    """``directory/logs`` when it is a real directory (not a symbolic link)."""
    if directory is None:
        return None
    log_dir = directory / "logs"
    try:
        return log_dir if stat.S_ISDIR(os.lstat(log_dir).st_mode) else None
    except OSError:
        return None


def list_logs(directory: Path | None) -> list[LogFile]:
    """The regular ``*.log`` files directly in ``directory/logs``, symbolic links and
    anything else left out."""
    log_dir = logs_folder(directory)
    if log_dir is None:
        return []
    out = []
    for name in sorted(os.listdir(log_dir)):
        if not LOG_NAME.match(name):
            continue
        path = log_dir / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        out.append(LogFile(name, path, st.st_size, st.st_mtime, path.stem,
                           container_of(path.stem)))
    return out


def kind_of(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def check_name(name: str) -> None:
    """LogNameRefused unless ``name`` is a plain log file name."""
    if "/" in name or "\\" in name or name in (".", "..") or name.startswith("."):
        raise LogNameRefused(f"{name!r} is a path; give a plain file name from the list of "
                             "log files (no '/', no '..', not absolute)")
    if not LOG_NAME.match(name):
        raise LogNameRefused(f"{name!r} is not a log file name (like "
                             "container_1_word_spout_1.log or stmgr-1.log)")


def find_log(owner: str, directory: Path | None, name: str) -> LogFile:
    """The log file ``name`` in ``directory/logs``: LogNameRefused for a name that is a
    path or not a log file name; LogFileMissing for a file that is absent or not a
    regular file (naming what it is), listing the ones there are. ``owner`` names whose
    logs these are in the messages ("topology 'wc'", "container 2 of 'wc'")."""
    check_name(name)
    files = list_logs(directory)
    for log in files:
        if log.name == name:
            return log
    log_dir = logs_folder(directory)
    where = (log_dir if log_dir is not None else
             f"{directory / 'logs'} (not a directory)" if directory is not None else
             "an unknown working directory")
    known = ", ".join(f.name for f in files) or "none"
    if log_dir is not None:
        try:
            mode = os.lstat(log_dir / name).st_mode
        except OSError:
            mode = None
        if mode is not None:
            raise LogFileMissing(f"log file {name!r} of {owner} in {where} is {kind_of(mode)}; "
                                 f"only regular files are served (log files: {known})")
    raise LogFileMissing(f"{owner} has no log file {name!r} in {where} (log files: {known})")


def open_regular(path: Path) -> int:
    """A descriptor on ``path`` when it is still a regular file: not followed if it became
    a symbolic link, not blocked on if it became a FIFO. OSError otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name} is no longer a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def tail_bytes(path: Path, lines: int, max_bytes: int | None = None) -> tuple[bytes, int, int]:
    """The last ``lines`` lines of a file, read from its end (logs can be large), as
    ``(data, offset of data, file size)``; at most ``max_bytes`` of them when given."""
    with os.fdopen(open_regular(path), "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        if lines <= 0:
            return b"", size, size
        block = min(size, max(8192, lines * 200))
        while True:
            fh.seek(size - block)
            data = fh.read(block)
            if data.count(b"\n") > lines or block == size:
                break
            block = min(size, block * 2)
    kept = data.splitlines(keepends=True)[-lines:]
    out = b"".join(kept)
    if max_bytes is not None and len(out) > max_bytes:
        out = out[-max_bytes:]
    return out, size - len(out), size


def tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a file as text, each ending with a newline."""
    data, _, _ = tail_bytes(path, lines)
    text = data.decode(errors="replace").splitlines()
    return "\n".join(text) + ("\n" if text else "")


def read_range(path: Path, offset: int, max_bytes: int) -> tuple[bytes, int, int]:
    """Up to ``max_bytes`` of a file from ``offset`` as ``(data, offset, size)``; from 0
    when the file shrank below ``offset`` (truncated or replaced), so a follower starts
    the new file over instead of waiting for it to grow past the old size."""
    with os.fdopen(open_regular(path), "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        if offset > size or offset < 0:
            offset = 0
        fh.seek(offset)
        return fh.read(max(0, min(max_bytes, MAX_READ_BYTES))), offset, size
