"""A topology's log files as the tracker serves them.

Where the files are comes from the state: the scheduler's job page link, else a Stream
Manager's working directory in the physical plan, else ``HOME/topologies/<name>``. The
files themselves are read by :mod:`engine.shell.logfiles`, the same rules a container's
shell applies on a cluster node (only regular files directly inside ``logs/``); this
module turns its errors into the tracker's 422 and 404.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.shell.logfiles import (LOG_NAME, MAX_LINES, LogFile, LogFileMissing, LogNameRefused,
                                   list_logs, tail)
from engine.shell import logfiles
from engine.tracker.errors import BadParameter, NotFound

__all__ = ["LOG_NAME", "MAX_LINES", "LogFile", "find_log", "list_logs", "tail", "working_dir"]


def working_dir(name: str, scheduler: Any, pplan: Any, home: Path | None) -> Path | None:
    """Where a topology runs, from what the state says (see the module docstring)."""
    if scheduler is not None:
        for link in scheduler.job_page_link:
            if link.startswith("file://"):
                return Path(link.removeprefix("file://"))
    if pplan is not None:
        for stmgr in pplan.stmgrs:
            if stmgr.cwd and not stmgr.shell_endpoint:
                return Path(stmgr.cwd)
    if home is not None:
        return home / "topologies" / name
    return None


def find_log(topology: str, directory: Path | None, name: str) -> LogFile:
    """The log file ``name`` of a topology: BadParameter (422) for a name that is a path
    or not a log file name; NotFound (404) for a file that is absent or not a regular
    file (naming what it is), listing the ones there are."""
    try:
        return logfiles.find_log(f"topology {topology!r}", directory, name)
    except LogNameRefused as exc:
        raise BadParameter("name", str(exc)) from None
    except LogFileMissing as exc:
        raise NotFound(str(exc)) from None
