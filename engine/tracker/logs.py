"""A topology's log files: which exist, and the last lines of one.

Every engine process writes ``<working dir>/logs/<process name>.log`` (instances
``container_<c>_<component>_<task>.log``, ``stmgr-<c>.log``, ``heron-tmanager.log``...),
as ``heron logs`` reads them. The tracker finds the working directory from the state
(the scheduler's job page link, else a Stream Manager's working directory in the
physical plan, else ``HOME/topologies/<name>``).

Only regular files directly inside that logs folder are listed or served
(docs/security.md, "Tracker logs"): a name with a separator or ``..``, an absolute path,
a symbolic link (even to a file inside the folder), a directory, a FIFO or a device is
refused, a logs folder that is itself a symbolic link serves nothing, and a file is
opened without following links and checked again once open, so swapping it for a link
between the listing and the read gains nothing.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.tracker.errors import BadParameter, NotFound

#: what a log file name may look like (no separators, no leading dot)
LOG_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*\.log$")
MAX_LINES = 10_000


@dataclass
class LogFile:
    name: str
    path: Path
    size: int
    mtime: float
    #: the instance, Stream Manager or process the file belongs to (its stem)
    owner: str
    container: int | None


def _container_of(stem: str) -> int | None:
    match = re.match(r"^(?:container_(\d+)_|(?:stmgr|metricsmgr|executor)-(\d+)$)", stem)
    if match is None:
        return 0 if stem == "heron-tmanager" else None
    return int(match.group(1) or match.group(2))


def working_dir(name: str, scheduler: Any, pplan: Any, home: Path | None) -> Path | None:
    """Where a topology runs, from what the state says (see the module docstring)."""
    if scheduler is not None:
        for link in scheduler.job_page_link:
            if link.startswith("file://"):
                return Path(link.removeprefix("file://"))
    if pplan is not None:
        for stmgr in pplan.stmgrs:
            if stmgr.cwd:
                return Path(stmgr.cwd)
    if home is not None:
        return home / "topologies" / name
    return None


def _logs_folder(directory: Path | None) -> Path | None:
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
    log_dir = _logs_folder(directory)
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
                           _container_of(path.stem)))
    return out


def _kind_of(mode: int) -> str:
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


def find_log(topology: str, directory: Path | None, name: str) -> LogFile:
    """The log file ``name`` of a topology: BadParameter (422) for a name that is a path
    or not a log file name; NotFound (404) for a file that is absent or not a regular
    file (naming what it is), listing the ones there are."""
    if "/" in name or "\\" in name or name in (".", "..") or name.startswith("."):
        raise BadParameter("name", f"{name!r} is a path; give a plain file name from "
                                   "/topologies/logfiles (no '/', no '..', not absolute)")
    if not LOG_NAME.match(name):
        raise BadParameter("name", f"{name!r} is not a log file name (like "
                                   "container_1_word_spout_1.log or stmgr-1.log)")
    files = list_logs(directory)
    for log in files:
        if log.name == name:
            return log
    log_dir = _logs_folder(directory)
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
            raise NotFound(f"log file {name!r} of topology {topology!r} in {where} is "
                           f"{_kind_of(mode)}; only regular files are served (log files: "
                           f"{known})")
    raise NotFound(f"topology {topology!r} has no log file {name!r} in {where} (log files: {known})")


def _open_regular(path: Path) -> int:
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


def tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a file, read from its end (logs can be large)."""
    if lines <= 0:
        return ""
    with os.fdopen(_open_regular(path), "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        block = min(size, max(8192, lines * 200))
        while True:
            fh.seek(size - block)
            data = fh.read(block)
            if data.count(b"\n") > lines or block == size:
                break
            block = min(size, block * 2)
    text = data.decode(errors="replace").splitlines()[-lines:]
    return "\n".join(text) + ("\n" if text else "")
