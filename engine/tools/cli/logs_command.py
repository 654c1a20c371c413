"""``heron logs NAME [COMPONENT [TASK]]``: a topology's process logs, wherever they are.

COMPONENT is a component's name (its instances' logs; TASK: one task's), or a process
kind as listed: ``stmgr``, ``metricsmgr`` or ``executor`` (every container's, or only
container TASK's), ``tmanager`` (``heron-tmanager.log``) or ``scheduler``; a listed file's
own stem (``stmgr-1``) names that file.

A local topology's logs are files on this machine (``HOME/topologies/NAME/logs``) and are
read directly, after a kill too. A topology on a cluster writes its containers' logs on
the nodes that run them; those are read through each container's shell
(engine/shell), found through the state manager and reached with the topology's keys,
never through a path on this machine. The submitting machine's own files (the
scheduler's log) are shown beside them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import click

from engine.shell.client import ShellClient, ShellError, container_shells
from engine.shell.logfiles import (
    MAX_READ_BYTES,
    LogFileMissing,
    find_log,
    list_logs,
    read_range,
    tail_bytes,
)
from engine.tools.cli.env import BadInput, CommandError, Env, common_options, topology_security

#: seconds between two polls of every followed file
FOLLOW_POLL_SECS = 0.5


@dataclass(frozen=True)
class LogEntry:
    name: str
    size: int
    mtime: float


class LogSource(Protocol):
    #: "" for this machine, else where the files are ("container 1 on node2")
    where: str

    def files(self) -> list[LogEntry]: ...

    def tail(self, name: str, lines: int) -> bytes: ...

    def read(self, name: str, offset: int) -> tuple[bytes, int, int]: ...


class LocalLogs:
    """The files of a ``logs`` folder on this machine."""

    where = ""

    def __init__(self, working_dir: Path) -> None:
        self.working_dir = working_dir

    def files(self) -> list[LogEntry]:
        return [LogEntry(f.name, f.size, f.mtime) for f in list_logs(self.working_dir)]

    def tail(self, name: str, lines: int) -> bytes:
        return tail_bytes(find_log("this machine", self.working_dir, name).path, lines)[0]

    def read(self, name: str, offset: int) -> tuple[bytes, int, int]:
        return read_range(find_log("this machine", self.working_dir, name).path, offset,
                          MAX_READ_BYTES)


class ShellLogs:
    """One remote container's files, through its shell."""

    def __init__(self, client: ShellClient, host: str, files: list[LogEntry]) -> None:
        self.client = client
        self.where = f"container {client.container} on {host}"
        self._files = files

    def files(self) -> list[LogEntry]:
        return self._files

    def tail(self, name: str, lines: int) -> bytes:
        return self.client.tail(name, lines)

    def read(self, name: str, offset: int) -> tuple[bytes, int, int]:
        return self.client.read(name, offset)


def log_sources(env: Env, name: str) -> list[LogSource]:
    """Where ``name``'s logs are: its containers' shells (on a cluster) and this
    machine's folder. A shell that does not answer is reported on stderr and left out;
    BadInput when there is nothing at all."""
    local_dir = env.working_dir(name)
    sources: list[LogSource] = []
    remote = _shell_sources(env, name, have_local=(local_dir / "logs").is_dir())
    if (local_dir / "logs").is_dir():
        served = {f.name for source in remote for f in source.files()}
        local = LocalLogs(local_dir)
        if any(f.name not in served for f in local.files()) or not remote:
            sources.append(_Without(local, served))
    sources.extend(remote)
    if not sources:
        raise BadInput(f"no logs for topology {name!r} (no {local_dir / 'logs'} and no "
                       f"running container publishes a shell in {env.state_spec().describe()})")
    return sources


class _Without:
    """A source minus the names another source serves (a cluster topology's local folder
    can hold an earlier local run's container logs under the same names)."""

    def __init__(self, source: LogSource, hidden: set[str]) -> None:
        self.source = source
        self.hidden = hidden
        self.where = source.where

    def files(self) -> list[LogEntry]:
        return [f for f in self.source.files() if f.name not in self.hidden]

    def tail(self, name: str, lines: int) -> bytes:
        return self.source.tail(name, lines)

    def read(self, name: str, offset: int) -> tuple[bytes, int, int]:
        return self.source.read(name, offset)


def _shell_sources(env: Env, name: str, *, have_local: bool) -> list[LogSource]:
    try:
        state = env.open_state()
    except CommandError as exc:
        if not have_local:
            raise
        click.echo(f"heron: note: {exc}; showing this machine's logs only", err=True)
        return []
    try:
        topology = state.get("topologies", name)
        if topology is None:
            return []
        shells = container_shells(state, name)
        if not shells:
            return []
        security = topology_security(state, name, env.working_dir(name))
    finally:
        state.close()
    sources: list[LogSource] = []
    for container, endpoint in shells.items():
        client = ShellClient(container, endpoint, topology.id, security)
        try:
            listed = client.list_logs()
        except ShellError as exc:
            click.echo(f"heron: note: {exc}", err=True)
            continue
        host = listed[0].host if listed else endpoint
        sources.append(ShellLogs(client, host, [LogEntry(f.name, f.size, f.mtime)
                                                for f in listed]))
    return sources


def _component_of(file_name: str) -> str | None:
    """``word`` of ``container_1_word_3.log``; None for a file that is not an instance's."""
    stem = file_name.removesuffix(".log")
    if not stem.startswith("container_"):
        return None
    parts = stem.rsplit("_", 1)[0].split("_", 2)
    return parts[-1] if len(parts) == 3 else None


def _task_of(file_name: str) -> str:
    return file_name.removesuffix(".log").rsplit("_", 1)[-1]


#: the engine processes whose logs are named by kind: ``stmgr-<container>.log``...
PROCESS_KINDS = ("stmgr", "metricsmgr", "executor")
#: the processes that have one log per topology, by the name ``heron logs`` takes
SINGLE_PROCESSES = {"tmanager": "heron-tmanager", "scheduler": "scheduler"}
_PROCESS_LOG = re.compile(rf"^({'|'.join(PROCESS_KINDS)})-(\d+)$")


def _process_of(file_name: str) -> tuple[str, str | None] | None:
    """(kind, container) of an engine process's log (``stmgr-1.log``: ("stmgr", "1"));
    None for an instance's or another file."""
    stem = file_name.removesuffix(".log")
    match = _PROCESS_LOG.match(stem)
    if match:
        return match.group(1), match.group(2)
    for kind, single in SINGLE_PROCESSES.items():
        if stem == single:
            return kind, "0" if kind == "tmanager" else None
    return None


def _selected(file_name: str, component: str, task: int | None) -> bool:
    """Whether ``heron logs NAME COMPONENT [TASK]`` shows this file: COMPONENT's
    instances (TASK's), a process kind's logs (container TASK's), or the file whose stem
    COMPONENT is."""
    if _component_of(file_name) == component:
        return task is None or _task_of(file_name) == str(task)
    if file_name.removesuffix(".log") == component:
        return task is None
    process = _process_of(file_name)
    if process is None or process[0] != component:
        return False
    return task is None or process[1] == str(task)


@click.command("logs")
@click.argument("name")
@click.argument("component", required=False)
@click.argument("task", type=int, required=False)
@click.option("-f", "--follow", is_flag=True, help="Keep printing lines as they are written.")
@click.option("-n", "--lines", type=int, default=20, show_default=True,
              help="How many last lines of each log to show.")
@common_options
def logs_command(name: str, component: str | None, task: int | None, follow: bool,
                 lines: int, env: Env) -> None:
    """Show the logs of topology NAME: the list of process logs, or the last lines of
    COMPONENT's instances (only TASK's with TASK). COMPONENT may also be a process:
    stmgr, metricsmgr or executor (only container TASK's with TASK), tmanager, scheduler.
    A local topology's work after a kill too; a cluster topology's are read from its
    running containers."""
    sources = log_sources(env, name)
    if component is None:
        chosen = [(s, f) for s in sources for f in s.files()]
        if not follow:
            for source, f in chosen:
                where = f"  ({source.where})" if source.where else ""
                click.echo(f"{f.name:48} {f.size:>10}  "
                           f"{datetime.fromtimestamp(f.mtime):%Y-%m-%d %H:%M:%S}{where}")
            return
    else:
        chosen = [(s, f) for s in sources for f in s.files()
                  if _selected(f.name, component, task)]
        if not chosen:
            files = [f.name for s in sources for f in s.files()]
            known = sorted({c for f in files if (c := _component_of(f)) is not None})
            kinds = [k for k in (*PROCESS_KINDS, *SINGLE_PROCESSES)
                     if any((_process_of(f) or ("",))[0] == k for f in files)]
            if task is None:
                what = repr(component)
            elif component in (*PROCESS_KINDS, *SINGLE_PROCESSES):
                what = f"container {task}'s {component}"
            else:
                what = f"task {task} of {component!r}"
            places = ", ".join(s.where or str(env.working_dir(name) / "logs") for s in sources)
            raise BadInput(f"no logs for {what} in {places} (components: "
                           f"{', '.join(known) or 'none'}; processes: "
                           f"{', '.join(kinds) or 'none'})")
    for source, f in chosen:
        if len(chosen) > 1:
            click.echo(f"==> {f.name} <=={f'  ({source.where})' if source.where else ''}")
        if lines > 0:
            for line in _text_lines(_safely(source.tail, f.name, lines) or b""):
                click.echo(line)
    if follow:
        _follow(chosen)


def _text_lines(data: bytes) -> list[str]:
    return data.decode(errors="replace").splitlines()


def _safely(call: Any, *args: Any) -> Any:
    """``call(*args)``, or None after a one-line note when the file or shell went away."""
    try:
        return call(*args)
    except (ShellError, LogFileMissing, OSError) as exc:
        click.echo(f"heron: note: {exc}", err=True)
        return None


def _follow(chosen: list[tuple[LogSource, LogEntry]]) -> None:
    """Print what is appended to the chosen files until Ctrl-C."""
    prefix = len(chosen) > 1
    try:
        for f, line in _poll_lines(chosen):
            click.echo(f"{f.name.removesuffix('.log')}: {line}" if prefix else line)
    except KeyboardInterrupt:
        pass


def _poll_lines(chosen: list[tuple[LogSource, LogEntry]]) -> Iterator[tuple[LogEntry, str]]:
    offsets = {i: f.size for i, (_, f) in enumerate(chosen)}
    partial = {i: b"" for i in offsets}
    failing: set[int] = set()
    while True:
        got = False
        for i, (source, f) in enumerate(chosen):
            try:
                data, start, _size = source.read(f.name, offsets[i])
            except Exception as exc:  # a shell or file that went away: said once
                if i not in failing:
                    failing.add(i)
                    click.echo(f"heron: note: {f.name}: {exc}", err=True)
                continue
            failing.discard(i)
            if start != offsets[i]:  # truncated or replaced: start over
                partial[i] = b""
            offsets[i] = start + len(data)
            if not data:
                continue
            *complete, partial[i] = (partial[i] + data).split(b"\n")
            for raw in complete:
                got = True
                yield f, raw.decode(errors="replace")
        if not got:
            time.sleep(FOLLOW_POLL_SECS)
