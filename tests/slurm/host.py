"""What this machine must have to run the test cluster (``missing_requirements``), the
names every run's pieces follow, and the two tools everything else calls (``ip``,
``tool``). Kept apart so a test can ask why it must skip without building anything.
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

#: Daemons and tools the cluster needs. slurmctld-wlm and slurmd-wlm are named directly
#: (not the /usr/sbin/slurmd alternative) so a machine where slurm-wlm-emulator switched
#: the alternatives is noticed (see missing_requirements) rather than half-working.
SLURMCTLD = "/usr/sbin/slurmctld-wlm"
SLURMD = "/usr/sbin/slurmd-wlm"
#: slurmd starts job steps through this path (compiled in): it must be the real build.
SLURMSTEPD = "/usr/sbin/slurmstepd"
CLIENTS = ("sbatch", "squeue", "scancel", "scontrol", "sinfo", "srun")
MUNGE_TOOLS = ("munged", "mungekey", "munge", "unmunge")
NET_TOOLS = ("ip", "nsenter", "unshare", "mount")
INSTALL_HINT = ("apt-get install --no-install-recommends slurmctld slurmd slurm-client "
                "munge (bash scripts/test.sh does it; never slurm-wlm-emulator)")

#: Where each run keeps its lock file (``<run>.lock``) and its base directory
#: (``<run>-XXXXXXXX``): outside /tmp, which every node replaces by its own tmpfs, and
#: short (munge's socket path must stay under 108 bytes).
RUN_ROOT = Path("/run/heron-slurm")
#: Names of everything a run creates, so stale ones can be recognised.
NETNS_RE = re.compile(r"^heron-([0-9a-f]{6})-n(\d+)$")
PROBE_RE = re.compile(r"^heron-probe-[0-9a-f]{6}$")
BRIDGE_RE = re.compile(r"^hb([0-9a-f]{6})$")
VETH_RE = re.compile(r"^hv([0-9a-f]{6})n(\d+)$")
BASE_RE = re.compile(r"^([0-9a-f]{6})-")

#: Priority of the routing rule that refuses what nodes send beyond the host: right after
#: the local table (0), before any other policy rule a machine may have.
RULE_PRIORITY = 5
RULE_RE = re.compile(r"^(\d+):.*\biif (hb([0-9a-f]{6}))\b.*\bprohibit\b")

CONTROLLER_NAME = "hctl"
SLURMD_PORT = 6818


def software_under_tmp() -> list[Path]:
    """The host's software the nodes must see that lives under ``/tmp``: this checkout
    (a user may clone into ``/tmp/x``), the interpreter and its packages (a virtualenv
    there), and whatever else is on ``sys.path`` there. Each node's ``/tmp`` is a tmpfs
    of its own, so these are bound into it at the same path (``_node_setup``); only the
    outermost of nested paths is kept."""
    tmp = Path("/tmp")
    candidates = [Path(__file__).resolve().parents[2], Path(sys.prefix), Path(sys.base_prefix),
                  Path(sys.executable).resolve().parent,
                  *(Path(entry) for entry in sys.path if entry)]
    under = set()
    for path in candidates:
        path = path.resolve()
        if path.is_dir() and tmp in path.parents:
            under.add(path)
    return sorted(p for p in under if not any(q in p.parents for q in under))


class SlurmUnavailable(RuntimeError):
    """This machine cannot run the cluster (the test should be skipped with the reason)."""


class SlurmClusterError(RuntimeError):
    """The cluster did not come up or a command on it failed; the message has log tails."""


def missing_requirements() -> str | None:
    """Why a cluster cannot be built here, or None when it can (a cheap check, plus one
    network namespace created and deleted to prove the kernel and ``ip`` allow it)."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, a bridge, mounts, daemons as root)"
    for tool in NET_TOOLS:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install iproute2 util-linux mount)"
    for path in (SLURMCTLD, SLURMD):
        if not os.access(path, os.X_OK):
            return f"{path} is missing: {INSTALL_HINT}"
    if not os.path.realpath(SLURMSTEPD).endswith("slurmstepd-wlm"):
        return (f"{SLURMSTEPD} is not the slurmstepd-wlm build (slurm-wlm-emulator "
                f"switched the alternatives? remove it): {INSTALL_HINT}")
    for tool in (*CLIENTS, *MUNGE_TOOLS):
        if shutil.which(tool) is None and not os.access(f"/usr/sbin/{tool}", os.X_OK):
            return f"{tool} is missing: {INSTALL_HINT}"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return f"there is no munge user: {INSTALL_HINT}"
    probe = f"heron-probe-{secrets.token_hex(3)}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True,
                          timeout=10)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True, timeout=10)
    return None


def tool(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    if check and done.returncode != 0:
        raise SlurmClusterError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done
