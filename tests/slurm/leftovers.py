"""What a run of the test cluster left on this machine, and removing what runs that died
left. A run is alive while it holds the flock on ``/run/heron-slurm/<run>.lock``, so a
cleaner (the next ``start()``) never touches another live test process's cluster.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from tests.slurm.host import BASE_RE, BRIDGE_RE, NETNS_RE, PROBE_RE, RUN_ROOT, VETH_RE, ip
from tests.slurm.namespaces import (
    delete_routing_rules,
    kill_all,
    netns_inode,
    pids_in_netns,
    pids_with_cmdline,
    routing_rules,
)


def run_is_live(run: str) -> bool:
    """Whether the run ``run`` still holds its lock (its process is alive)."""
    path = RUN_ROOT / f"{run}.lock"
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def remove_if_unlocked(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        path.unlink(missing_ok=True)
    except BlockingIOError:
        pass
    finally:
        os.close(fd)


def remove_stale_runs() -> list[str]:
    """Remove what runs that are no longer alive left behind: processes in their
    namespaces or naming their base directory, their namespaces, veths, bridges, base
    directories and lock files. Returns the run ids cleaned. A run is alive while it
    holds the flock on its lock file, so a live run (another test process) is never
    touched."""
    runs: dict[str, list[str]] = {}
    for name in ip("netns", "list", check=False).stdout.split():
        m = NETNS_RE.match(name)
        if m:
            runs.setdefault(m.group(1), []).append(name)
        elif PROBE_RE.match(name):
            # left by a missing_requirements() that died between add and delete
            ident = netns_inode(f"/run/netns/{name}")
            if ident is not None and not pids_in_netns(ident):
                ip("netns", "delete", name, check=False)
    links = os.listdir("/sys/class/net") if os.path.isdir("/sys/class/net") else []
    for link in links:
        m = BRIDGE_RE.match(link) or VETH_RE.match(link)
        if m:
            runs.setdefault(m.group(1), [])
    for _, _, run in routing_rules():
        runs.setdefault(run, [])
    if RUN_ROOT.is_dir():
        for entry in RUN_ROOT.iterdir():
            m = BASE_RE.match(entry.name)
            if m and entry.is_dir():
                runs.setdefault(m.group(1), [])
            elif entry.suffix == ".lock" and not entry.name.startswith("."):
                runs.setdefault(entry.stem, [])
            elif entry.name.startswith(".") and entry.suffix == ".tmp":
                remove_if_unlocked(entry)  # a run died while taking its lock
    cleaned = []
    for run, namespaces in runs.items():
        if run_is_live(run):
            continue
        for ns in namespaces:
            ident = netns_inode(f"/run/netns/{ns}")
            if ident is not None:
                kill_all(lambda ident=ident: pids_in_netns(ident))
            ip("netns", "delete", ns, check=False)
        for base in RUN_ROOT.glob(f"{run}-*"):
            kill_all(lambda base=base: pids_with_cmdline(str(base)))
            shutil.rmtree(base, ignore_errors=True)
        for link in links:
            if link == f"hb{run}" or re.match(rf"^hv{run}n\d+$", link):
                ip("link", "delete", link, check=False)
        delete_routing_rules(run)
        try:
            (RUN_ROOT / f"{run}.lock").unlink()
        except FileNotFoundError:
            pass
        cleaned.append(run)
    return cleaned


def run_leftovers(run: str, netns_ids: Iterable[tuple[int, int]] = ()) -> list[str]:
    """What of run ``run`` exists on this machine: namespaces, links, mounts, its base
    directory and lock, processes naming its base directory or (``netns_ids``: the
    namespaces' (dev, inode), which outlive their names) living in its namespaces."""
    found = []
    for name in ip("netns", "list", check=False).stdout.split():
        m = NETNS_RE.match(name)
        if m and m.group(1) == run:
            found.append(f"namespace {name}")
    if os.path.isdir("/sys/class/net"):
        for link in os.listdir("/sys/class/net"):
            m = BRIDGE_RE.match(link) or VETH_RE.match(link)
            if m and m.group(1) == run:
                found.append(f"link {link}")
    for _, bridge, owner in routing_rules():
        if owner == run:
            found.append(f"routing rule iif {bridge}")
    for ident in netns_ids:
        pids = pids_in_netns(ident)
        if pids:
            found.append(f"processes in namespace {ident}: {sorted(pids)}")
    with open("/proc/self/mountinfo") as f:
        for line in f:
            if f"{RUN_ROOT}/{run}-" in line or f"heron-{run}-" in line:
                found.append(f"mount {line.split()[4]}")
    for path in RUN_ROOT.glob(f"{run}-*"):
        found.append(f"directory {path}")
    if (RUN_ROOT / f"{run}.lock").exists():
        found.append(f"lock {RUN_ROOT / run}.lock")
    pids = pids_with_cmdline(f"{RUN_ROOT}/{run}-")
    if pids:
        found.append(f"processes naming the base directory: {sorted(pids)}")
    return found
