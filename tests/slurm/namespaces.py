"""Processes and network namespaces seen through /proc, the routing rule that keeps the
cluster's network on this machine, and one node's names: what both building a cluster
and cleaning up after one need, without the cluster object.

Processes are found by their network namespace's inode (``pids_in_netns``), not by
name, because a namespace outlives its name in ``ip netns`` while processes remain in it.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import time

from tests.slurm.host import RULE_RE, SlurmClusterError, ip


def netns_inode(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def pids_in_netns(ident: tuple[int, int]) -> set[int]:
    """Every live process whose network namespace is ``ident`` (dev, inode) (what
    ``ip netns pids`` does, without needing the namespace's name any more)."""
    found = set()
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        if netns_inode(f"/proc/{entry}/ns/net") == ident:
            found.add(int(entry))
    return found


def kill_all(pids_of, *, rounds: int = 50) -> set[int]:
    """SIGKILL what ``pids_of()`` returns until it returns nothing (a dying process may
    still fork once); returns what survived ~5 s of that."""
    left: set[int] = set()
    for _ in range(rounds):
        left = pids_of()
        if not left:
            return left
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    return pids_of()


def pids_with_cmdline(fragment: str) -> set[int]:
    found = set()
    needle = fragment.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if needle in f.read():
                    found.add(int(entry))
        except OSError:
            pass
    return found


def routing_rules() -> list[tuple[str, str, str]]:
    """(priority, bridge, run) of every routing rule a run added."""
    found = []
    for line in ip("rule", "list", check=False).stdout.splitlines():
        m = RULE_RE.match(line.strip())
        if m:
            found.append((m.group(1), m.group(2), m.group(3)))
    return found


def delete_routing_rules(run: str) -> None:
    for priority, bridge, owner in routing_rules():
        if owner == run:
            ip("rule", "del", "priority", priority, "iif", bridge, "prohibit", check=False)


def free_subnet() -> int:
    """A third octet X such that 10.213.X.0/24 appears in no address or route here."""
    used = ip("-4", "-o", "addr", "show", check=False).stdout
    used += ip("-4", "route", "show", "table", "all", check=False).stdout
    taken = {int(m) for m in re.findall(r"\b10\.213\.(\d+)\.", used)}
    free = [x for x in range(1, 255) if x not in taken]
    if not free:
        raise SlurmClusterError("no free 10.213.X.0/24 subnet on this machine")
    return random.choice(free)


class Node:
    """One node's names and its running ``slurmd`` (None while it is dead)."""

    def __init__(self, index: int, run: str, subnet: int) -> None:
        self.index = index
        self.name = f"node{index}"
        self.netns = f"heron-{run}-n{index}"
        self.veth = f"hv{run}n{index}"
        self.address = f"10.213.{subnet}.{10 + index}"
        self.netns_id: tuple[int, int] | None = None
        self.slurmd: subprocess.Popen | None = None
        self.partitioned = False
