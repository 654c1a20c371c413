"""A topology's log files: which exist, and the last lines of one.

Every engine process writes ``<working dir>/logs/<process name>.log`` (instances
``container_<c>_<component>_<task>.log``, ``stmgr-<c>.log``, ``heron-tmanager.log``...),
as ``heron logs`` reads them. The tracker finds the working directory from the state
(the scheduler's job page link, else a Stream Manager's working directory in the
physical plan, else ``HOME/topologies/<name>``) and serves only plain file names that
are in that directory's listing, so a request can never name a path outside it.
"""

from __future__ import annotations

import re
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


def list_logs(directory: Path | None) -> list[LogFile]:
    if directory is None:
        return []
    log_dir = directory / "logs"
    if not log_dir.is_dir():
        return []
    out = []
    for path in sorted(log_dir.iterdir()):
        if not LOG_NAME.match(path.name) or not path.is_file():
            continue
        try:
            stat = path.stat()
        except OSError:
            continue
        out.append(LogFile(path.name, path, stat.st_size, stat.st_mtime, path.stem,
                           _container_of(path.stem)))
    return out


def find_log(topology: str, directory: Path | None, name: str) -> LogFile:
    """The log file ``name`` of a topology; NotFound lists the ones there are."""
    if not LOG_NAME.match(name):
        raise BadParameter("name", f"{name!r} is not a log file name (like "
                                   "container_1_word_spout_1.log or stmgr-1.log)")
    files = list_logs(directory)
    for log in files:
        if log.name == name:
            return log
    where = directory / "logs" if directory is not None else "an unknown working directory"
    known = ", ".join(f.name for f in files) or "none"
    raise NotFound(f"topology {topology!r} has no log file {name!r} in {where} (log files: {known})")


def tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a file, read from its end (logs can be large)."""
    if lines <= 0:
        return ""
    with open(path, "rb") as fh:
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
