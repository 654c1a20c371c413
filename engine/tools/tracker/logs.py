"""A topology's log files as the tracker serves them.

A local topology's files are on this machine: where comes from the state (the
scheduler's job page link, else a Stream Manager's working directory in the physical
plan, else ``HOME/topologies/<name>``), and they are read by :mod:`engine.shell.logfiles`,
the same rules a container's shell applies on a cluster node (only regular files
directly inside ``logs/``). A cluster topology's containers write theirs on their nodes:
those are listed and read through each container's shell (engine/shell), beside the
submitting machine's own files (the scheduler's log). This module turns the errors of
both into the tracker's 422, 404 and 503.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from engine.messages import physical_plan_pb2, scheduler_pb2
from engine.shell import logfiles
from engine.shell.client import ShellClient, ShellError
from engine.shell.logfiles import (
    LOG_NAME,
    MAX_LINES,
    LogFile,
    LogFileMissing,
    LogNameRefused,
    list_logs,
    tail,
)
from engine.tools.tracker.errors import BadParameter, NotFound, Unavailable

__all__ = ["LOG_NAME", "MAX_LINES", "LogFile", "ServedLog", "find_log", "find_served",
           "list_logs", "read_tail", "served_logs", "tail", "working_dir"]


def working_dir(name: str, scheduler: scheduler_pb2.SchedulerLocation | None,
                pplan: physical_plan_pb2.PhysicalPlan | None, home: Path | None) -> Path | None:
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


@dataclass
class ServedLog:
    """A log file the tracker can serve: on this machine (``path``) or in a remote
    container (``client``, its shell)."""

    name: str
    size: int
    mtime: float
    owner: str
    container: int | None
    host: str | None = None
    path: Path | None = None
    client: ShellClient | None = None


def served_logs(directory: Path | None, shells: dict[int, str],
                client_for: Callable[[int, str], ShellClient]) -> list[ServedLog]:
    """This machine's files in ``directory/logs`` and, for each ``{container: shell
    endpoint}``, that container's files (asked in parallel, so one node that does not
    answer costs one timeout, not one per container). A container that does not answer
    is left out; a local file that a container also serves is the container's."""
    def ask(item: tuple[int, str]) -> list[ServedLog]:
        container, endpoint = item
        client = client_for(container, endpoint)
        try:
            listed = client.list_logs()
        except ShellError:
            return []
        return [ServedLog(f.name, f.size, f.mtime, f.name.removesuffix(".log"), container,
                          f.host, client=client) for f in listed]

    remote: list[ServedLog] = []
    if shells:
        with ThreadPoolExecutor(max_workers=min(8, len(shells))) as pool:
            for found in pool.map(ask, shells.items()):
                remote.extend(found)
    served = {r.name for r in remote}
    local = [ServedLog(f.name, f.size, f.mtime, f.owner, f.container, path=f.path)
             for f in list_logs(directory) if f.name not in served]
    return sorted(local + remote, key=lambda f: f.name)


def find_served(topology: str, directory: Path | None, files: list[ServedLog],
                name: str) -> ServedLog:
    """The served file ``name`` (422 for a name that is a path; 404 listing the files)."""
    try:
        logfiles.check_name(name)
    except LogNameRefused as exc:
        raise BadParameter("name", str(exc)) from None
    for f in files:
        if f.name == name and f.client is not None:
            return f
    try:
        found = find_log(topology, directory, name)  # the local rules and their messages
    except NotFound:
        if any(f.client is not None for f in files):
            known = ", ".join(f.name for f in files) or "none"
            raise NotFound(f"topology {topology!r} has no log file {name!r} (log files: "
                           f"{known})") from None
        raise
    return ServedLog(found.name, found.size, found.mtime, found.owner, found.container,
                     path=found.path)


def read_tail(log: ServedLog, lines: int) -> str:
    """The last ``lines`` lines of a served file, from this machine or its container."""
    if log.client is None:
        assert log.path is not None
        return tail(log.path, lines)
    try:
        data = log.client.tail(log.name, lines)
    except ShellError as exc:
        raise Unavailable(str(exc)) from None
    text = data.decode(errors="replace").splitlines()
    return "\n".join(text) + ("\n" if text else "")
