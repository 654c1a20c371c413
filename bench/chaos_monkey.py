"""The chaos soak's moving parts (bench/chaos.py): the engine's processes of one topology
and their kinds, the monkey that picks and ``kill -9``s one, each kill's recovery, the
sink's ledger read as it grows, and the resource sampler.

Processes are found from the pid files the engine writes (``<working dir>/pids/
<name>.pid``: pid and start time, so a reused pid is never taken for the process), and
from the command lines of live processes that name the topology's ``launch.json``
(``python -m engine.<role> --launch ...``), so a role that writes no pid file (or one
named differently, e.g. a supervisor added later) is still found and sampled.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from engine.common.process import read_pid_file

SPOUT_COMPONENT = "sentences"

#: every kind, in the order tables list them
KINDS = ["spout instance", "bolt instance", "stream manager", "metrics manager",
         "topology master", "executor", "scheduler", "scheduler service", "health manager"]

_MODULE_KINDS = {"engine.scheduler": "scheduler", "engine.executor": "executor",
                 "engine.tmanager": "topology master", "engine.healthmgr": "health manager",
                 "engine.stmgr": "stream manager", "engine.metricsmgr": "metrics manager",
                 "engine.instance": "instance"}


def kind_of(name: str) -> str:
    """The kind of the process a pid file ``<name>.pid`` names."""
    if name == "scheduler":  # the supervisor, when the service is supervised
        return "scheduler"
    if name == "scheduler-service":  # the service proper, under its supervisor
        return "scheduler service"
    if name.startswith("executor-"):
        return "executor"
    if name == "heron-tmanager":
        return "topology master"
    if name == "heron-healthmgr":
        return "health manager"
    if name.startswith("stmgr-"):
        return "stream manager"
    if name.startswith("metricsmgr-"):
        return "metrics manager"
    m = re.fullmatch(r"container_\d+_(.+)_\d+", name)
    if m:
        return "spout instance" if m.group(1) == SPOUT_COMPONENT else "bolt instance"
    return re.sub(r"[-_]?\d+$", "", name) or name


def kind_of_cmdline(cmdline: list[str]) -> str | None:
    if "--serve" in cmdline:
        return "scheduler service"
    for i, arg in enumerate(cmdline):
        if arg == "-m" and i + 1 < len(cmdline):
            return _MODULE_KINDS.get(cmdline[i + 1], cmdline[i + 1])
    return None


def read_json_file(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


class Processes:
    """The topology's engine processes, by name (pid file stem), read on demand."""

    def __init__(self, working_dir: Path) -> None:
        self.working_dir = working_dir
        self.pid_dir = working_dir / "pids"
        self.launch = str(working_dir / "launch.json")

    def by_name(self) -> dict[str, psutil.Process | None]:
        out: dict[str, psutil.Process | None] = {}
        for path in sorted(self.pid_dir.glob("*.pid")):
            out[path.stem] = read_pid_file(path)
        return out

    def live(self) -> dict[str, psutil.Process]:
        return {n: p for n, p in self.by_name().items() if p is not None}

    def everything(self) -> list[tuple[str, str, psutil.Process]]:
        """(kind, name, process) of every live engine process: the pid files', and any
        process whose command line names the topology's launch file but has no pid file."""
        named = self.live()
        out = [(kind_of(n), n, p) for n, p in named.items()]
        pids = {p.pid for p in named.values()}
        for proc in psutil.process_iter(["cmdline"]):
            try:
                cmdline = proc.info["cmdline"] or []
                if proc.pid in pids or self.launch not in cmdline:
                    continue
                if proc.status() == psutil.STATUS_ZOMBIE:
                    continue
            except psutil.Error:
                continue
            kind = kind_of_cmdline(cmdline) or "other"
            if kind == "instance":
                kind = "bolt instance"
            out.append((kind, f"{kind} pid {proc.pid}", proc))
        return out


@dataclass
class Kill:
    t: float
    kind: str
    name: str
    pid: int
    #: seconds from the kill until the pid file named a new live process
    back_s: float | None = None
    #: seconds from the kill until the process was back and the sink recorded ids again
    #: at 80 % of the offered rate or more (over 2 s)
    recovered_s: float | None = None
    #: the bench had to submit the topology again (nothing of it was left running)
    resubmitted: bool = False
    #: another kill was still recovering when this one came
    overlapped: bool = False
    gave_up: bool = False

    @property
    def open(self) -> bool:
        return self.recovered_s is None and not self.gave_up


class Monkey:
    """Picks the next victim: each kind once, in a seeded random order (so a short run
    hits every kind), then a kind at random, and a random live process of that kind.
    Kills with SIGKILL."""

    #: seconds a kind keeps its turn while none of its processes is live
    PENDING_LIMIT = 60.0

    def __init__(self, rng: random.Random, kinds: list[str], interval: tuple[float, float]):
        self.rng = rng
        self.kinds = list(kinds)
        self.first_round = list(kinds)
        self.rng.shuffle(self.first_round)
        self.interval = interval
        self.next_at = 0.0
        #: the kind whose turn it is, until one of its processes is live to be killed
        self.pending: str | None = None
        self.pending_since = 0.0

    def schedule(self, now: float) -> None:
        self.next_at = now + self.rng.uniform(*self.interval)

    def pick(self, live: dict[str, psutil.Process]) -> tuple[str, str, psutil.Process] | None:
        """The next victim, or None when the kind whose turn it is has no live process
        (being restarted): the caller tries again shortly, so every kind keeps its share
        and a topology coming back up is not hit only where it has started already."""
        by_kind: dict[str, list[str]] = {}
        for name in sorted(live):
            by_kind.setdefault(kind_of(name), []).append(name)
        now = time.monotonic()
        if self.pending is not None and now - self.pending_since > self.PENDING_LIMIT:
            self.pending = None  # none of that kind came back for a long time: move on
        if self.pending is None:
            self.pending = (self.first_round.pop(0) if self.first_round
                            else self.rng.choice(self.kinds))
            self.pending_since = now
        kind = self.pending
        if not by_kind.get(kind):
            return None
        self.pending = None
        name = self.rng.choice(by_kind[kind])
        return kind, name, live[name]

    @staticmethod
    def kill(proc: psutil.Process) -> bool:
        try:
            os.kill(proc.pid, signal.SIGKILL)
            return True
        except OSError:
            return False


class Ledger:
    """The sinks' files (``sink-<task>.log``), read incrementally: the distinct ids
    recorded (a bitmap, one bit per id), duplicate deliveries, ids whose word count does
    not match the corpus."""

    def __init__(self, directory: Path, check) -> None:
        self.directory = directory
        self.check = check  # (gid, words) -> bool: the recorded word count is the corpus's
        self.offsets: dict[Path, int] = {}
        self.partial: dict[Path, bytes] = {}
        self.bits = bytearray(1 << 16)
        self.distinct = 0
        self.words = 0
        self.duplicates = 0  # deliveries the sinks recorded as duplicates ("d <id>")
        self.missed_dups = 0  # first-time lines for an id already recorded (a sink's dedup failed)
        self.wrong = 0           # recorded word counts that differ from the corpus
        self.torn = 0            # lines cut by a kill

    def has(self, gid: int) -> bool:
        byte = gid >> 3
        return byte < len(self.bits) and bool(self.bits[byte] & (1 << (gid & 7)))

    def _mark(self, gid: int) -> bool:
        byte, bit = gid >> 3, 1 << (gid & 7)
        if byte >= len(self.bits):
            self.bits.extend(bytearray(max(byte + 1 - len(self.bits), len(self.bits))))
        was = bool(self.bits[byte] & bit)
        self.bits[byte] |= bit
        return was

    def poll(self) -> int:
        """Read what the sinks appended; how many new distinct ids."""
        before = self.distinct
        for path in sorted(self.directory.glob("sink-*.log")):
            try:
                with open(path, "rb") as fh:
                    fh.seek(self.offsets.get(path, 0))
                    data = self.partial.pop(path, b"") + fh.read()
                    self.offsets[path] = fh.tell()
            except OSError:
                continue
            lines = data.split(b"\n")
            if lines[-1]:
                self.partial[path] = lines[-1]
            for line in lines[:-1]:
                parts = line.split()
                if len(parts) != 2:
                    self.torn += bool(parts)
                    continue
                if parts[0] == b"d":
                    self.duplicates += 1
                    continue
                gid, words = int(parts[0]), int(parts[1])
                if self._mark(gid):
                    self.missed_dups += 1
                    continue
                self.distinct += 1
                self.words += words
                if not self.check(gid, words):
                    self.wrong += 1
        return self.distinct - before


@dataclass
class Throughput:
    """Distinct ids recorded over time: (t, total) once per poll."""

    history: deque = field(default_factory=lambda: deque(maxlen=64))
    per_second: list[tuple[float, float]] = field(default_factory=list)
    _last_second: tuple[float, int] | None = None

    def add(self, t: float, total: int) -> None:
        self.history.append((t, total))
        if self._last_second is None:
            self._last_second = (t, total)
        elif t - self._last_second[0] >= 1.0:
            t0, n0 = self._last_second
            self.per_second.append((t, (total - n0) / (t - t0)))
            self._last_second = (t, total)

    def rate_over(self, seconds: float, now: float) -> float:
        """Ids/s over the last ``seconds`` (0 until that much history exists)."""
        if not self.history:
            return 0.0
        t1, n1 = self.history[-1]
        for t0, n0 in reversed(self.history):
            if t1 - t0 >= seconds:
                return (n1 - n0) / (t1 - t0)
        return 0.0


@dataclass
class ResourceSample:
    t: float
    kind: str
    name: str
    rss: int
    fds: int


def sample_resources(processes: Processes, t: float) -> list[ResourceSample]:
    out = []
    for kind, name, proc in processes.everything():
        try:
            with proc.oneshot():
                out.append(ResourceSample(t, kind, name, proc.memory_info().rss,
                                          proc.num_fds()))
        except psutil.Error:
            continue
    return out


def leftovers(needle: str) -> list[psutil.Process]:
    """Live processes whose command line names ``needle`` (this run's home)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if proc.pid != os.getpid() and needle in " ".join(proc.info["cmdline"] or ()) \
                    and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def wait_gone(needle: str, timeout: float) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = leftovers(needle)
        if not left:
            return []
        time.sleep(0.3)
    return leftovers(needle)
