"""A real, throw-away Slurm cluster of several nodes on this machine, for tests.

Why real daemons and not a fake: a Slurm scheduler's value is in what only a cluster
manager does (placing a job on a node, killing it with ``scancel``, noticing a dead node
and failing or requeueing its jobs), so its tests must talk to one. Debian's
``slurmctld``, ``slurmd``, ``slurm-client`` and ``munge`` packages provide the daemons
(``scripts/test.sh`` installs them, never ``slurm-wlm-emulator``).

What one ``SlurmCluster`` builds (docs/cluster-testing.md tells why each piece is so):

- a private base directory ``/run/heron-slurm/<run>-XXXXXXXX`` (mode 0755: munge wants
  every directory above its socket searchable by all; not under /tmp, which every node
  replaces by its own) holding ``slurm.conf``, the munge key and socket, the controller's
  state, every daemon's log (``log/``), the nodes' /etc/hosts, and the shared "uploader"
  directory (``shared/``, the same files at the same path on the host and every node);
- ``munged`` run by hand as the ``munge`` user with its own key (``mungekey``, owned by
  munge, mode 0400) and its own socket, which ``AuthInfo=socket=...`` hands to Slurm;
- a Linux bridge ``hb<run>`` with the host's address ``10.213.X.1/24`` (X picked among
  the subnets nobody uses here), where the controller listens and where ZooKeeper can
  listen (``ZooKeeperServer(host=...)``); a routing rule refuses, at once, anything a
  node sends beyond the host's own addresses, so the network never leaves the machine;
- per node ``node<i>`` a network namespace ``heron-<run>-n<i>`` joined to the bridge by a
  veth pair (``eth0``, address ``10.213.X.<10+i>``, loopback up, default route via the
  bridge address) in which ``slurmd`` runs in its own hostname (``node<i>``) and mount
  namespace: a tmpfs of its own is the node's ``/tmp`` (jobs' working directories, logs,
  ipc sockets) and holds slurmd's spool; ``/dev/shm`` is private too; all of it vanishes
  when the node dies, as a crashed machine's local disk would. The rest of the file
  system (the OS, Python, this repository) is the host's, as software installed on every
  node would be: pass data through the shared directory only;
- ``slurmctld`` on the host's side of the bridge, in its own hostname namespace so it can
  be called ``hctl`` without renaming the machine.

Every daemon is told to die with the thread that started it (PR_SET_PDEATHSIG), an
``atexit`` hook stops the cluster, and names are unique per run: a run holds an flock on
``/run/heron-slurm/<run>.lock`` while it lives, and ``start()`` first removes what earlier
runs that no longer hold theirs left behind (processes in their namespaces, namespaces,
links, routing rules, base directories).
"""

from __future__ import annotations

import atexit
import fcntl
import os
import pwd
import random
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, MutableSet, Sequence
from pathlib import Path

from tests.zookeeper_server import _die_with_parent_hook, free_port

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


def _tool(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    if check and done.returncode != 0:
        raise SlurmClusterError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def _netns_inode(path: str) -> tuple[int, int] | None:
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
        if _netns_inode(f"/proc/{entry}/ns/net") == ident:
            found.add(int(entry))
    return found


def _kill_all(pids_of, *, rounds: int = 50) -> set[int]:
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


def _pids_with_cmdline(fragment: str) -> set[int]:
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


def _run_is_live(run: str) -> bool:
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


def _remove_if_unlocked(path: Path) -> None:
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
    for name in _ip("netns", "list", check=False).stdout.split():
        m = NETNS_RE.match(name)
        if m:
            runs.setdefault(m.group(1), []).append(name)
        elif PROBE_RE.match(name):
            # left by a missing_requirements() that died between add and delete
            ident = _netns_inode(f"/run/netns/{name}")
            if ident is not None and not pids_in_netns(ident):
                _ip("netns", "delete", name, check=False)
    links = os.listdir("/sys/class/net") if os.path.isdir("/sys/class/net") else []
    for link in links:
        m = BRIDGE_RE.match(link) or VETH_RE.match(link)
        if m:
            runs.setdefault(m.group(1), [])
    for _, _, run in _rules():
        runs.setdefault(run, [])
    if RUN_ROOT.is_dir():
        for entry in RUN_ROOT.iterdir():
            m = BASE_RE.match(entry.name)
            if m and entry.is_dir():
                runs.setdefault(m.group(1), [])
            elif entry.suffix == ".lock" and not entry.name.startswith("."):
                runs.setdefault(entry.stem, [])
            elif entry.name.startswith(".") and entry.suffix == ".tmp":
                _remove_if_unlocked(entry)  # a run died while taking its lock
    cleaned = []
    for run, namespaces in runs.items():
        if _run_is_live(run):
            continue
        for ns in namespaces:
            ident = _netns_inode(f"/run/netns/{ns}")
            if ident is not None:
                _kill_all(lambda ident=ident: pids_in_netns(ident))
            _ip("netns", "delete", ns, check=False)
        for base in RUN_ROOT.glob(f"{run}-*"):
            _kill_all(lambda base=base: _pids_with_cmdline(str(base)))
            shutil.rmtree(base, ignore_errors=True)
        for link in links:
            if link == f"hb{run}" or re.match(rf"^hv{run}n\d+$", link):
                _ip("link", "delete", link, check=False)
        _delete_rules(run)
        try:
            (RUN_ROOT / f"{run}.lock").unlink()
        except FileNotFoundError:
            pass
        cleaned.append(run)
    return cleaned


def _rules() -> list[tuple[str, str, str]]:
    """(priority, bridge, run) of every routing rule a run added."""
    found = []
    for line in _ip("rule", "list", check=False).stdout.splitlines():
        m = RULE_RE.match(line.strip())
        if m:
            found.append((m.group(1), m.group(2), m.group(3)))
    return found


def _delete_rules(run: str) -> None:
    for priority, bridge, owner in _rules():
        if owner == run:
            _ip("rule", "del", "priority", priority, "iif", bridge, "prohibit", check=False)


def run_leftovers(run: str, netns_ids: Iterable[tuple[int, int]] = ()) -> list[str]:
    """What of run ``run`` exists on this machine: namespaces, links, mounts, its base
    directory and lock, processes naming its base directory or (``netns_ids``: the
    namespaces' (dev, inode), which outlive their names) living in its namespaces."""
    found = []
    for name in _ip("netns", "list", check=False).stdout.split():
        m = NETNS_RE.match(name)
        if m and m.group(1) == run:
            found.append(f"namespace {name}")
    if os.path.isdir("/sys/class/net"):
        for link in os.listdir("/sys/class/net"):
            m = BRIDGE_RE.match(link) or VETH_RE.match(link)
            if m and m.group(1) == run:
                found.append(f"link {link}")
    for _, bridge, owner in _rules():
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
    pids = _pids_with_cmdline(f"{RUN_ROOT}/{run}-")
    if pids:
        found.append(f"processes naming the base directory: {sorted(pids)}")
    return found


def _free_subnet() -> int:
    """A third octet X such that 10.213.X.0/24 appears in no address or route here."""
    used = _ip("-4", "-o", "addr", "show", check=False).stdout
    used += _ip("-4", "route", "show", "table", "all", check=False).stdout
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


class SlurmCluster:
    """A Slurm cluster of ``nodes`` nodes, each in its own network namespace on a bridge.

    ``env()`` is the environment for the Slurm clients (``SLURM_CONF``); ``run()`` runs
    one with a timeout. ``host_address`` is the host's address on the bridge (the
    controller listens there; give it to ZooKeeper); ``node_address(name)`` a node's.
    ``shared_dir`` is the uploader's directory, the same on the host and every node;
    ``local_dir`` (``/tmp``) is where each node has its private tmpfs (read a node's copy
    through ``node_path``; run commands there with ``node_run``). Break nodes with
    ``kill_node``/``partition`` and mend them with ``return_to_service`` (or
    ``restart_node``/``heal`` and ``resume``). ``service_pids``, when given (the suite's
    SESSION_SERVICE_PIDS), holds the pid of every daemon while it runs, so the suite's
    orphan-process check ignores them.
    """

    def __init__(self, nodes: int = 3, *, cpus_per_node: int = 4,
                 real_memory_mb: int = 2048, slurmd_timeout: int = 10,
                 message_timeout: int = 5,
                 kill_wait: int = 2, cred_expire: int = 10, local_size: str = "512m",
                 start_timeout: float = 60.0,
                 service_pids: MutableSet[int] | None = None) -> None:
        if not 1 <= nodes <= 200:
            raise ValueError("nodes must be between 1 and 200")
        self.cpus_per_node = cpus_per_node
        self.real_memory_mb = real_memory_mb
        self.slurmd_timeout = slurmd_timeout
        self.message_timeout = message_timeout
        self.kill_wait = kill_wait
        self.cred_expire = cred_expire
        self.local_size = local_size
        self.start_timeout = start_timeout
        self.service_pids = service_pids
        self.run_id = secrets.token_hex(3)
        self.bridge = f"hb{self.run_id}"
        self.subnet: int | None = None
        self.nodes: dict[str, Node] = {}
        self._node_count = nodes
        self.base: Path | None = None
        self.ctld_port: int | None = None
        self.munged: subprocess.Popen | None = None
        self.slurmctld: subprocess.Popen | None = None
        self._lock_fd: int | None = None
        self._atexit_registered = False
        self.start_seconds: float | None = None

    # ---------------------------------------------------------------- layout

    def _path(self, *parts: str) -> Path:
        if self.base is None:
            raise RuntimeError("SlurmCluster is not started")
        return self.base.joinpath(*parts)

    @property
    def conf_path(self) -> Path:
        return self._path("slurm.conf")

    @property
    def munge_socket(self) -> Path:
        return self._path("munge", "run", "munge.socket")

    @property
    def log_dir(self) -> Path:
        return self._path("log")

    @property
    def shared_dir(self) -> Path:
        """The uploader's directory: the same files at the same path on every node."""
        return self._path("shared")

    @property
    def local_dir(self) -> Path:
        """Each node's private scratch space, ``/tmp``: a tmpfs of its own on every node
        (jobs' working directories and logs, ipc sockets), not the host's /tmp."""
        return Path("/tmp")

    @property
    def _node_root(self) -> Path:
        """Where each node mounts its tmpfs (its /tmp and slurmd's spool live there);
        an empty directory from the host."""
        return self._path("node")

    @property
    def host_address(self) -> str:
        """The host's address on the bridge: reachable from every node."""
        if self.subnet is None:
            raise RuntimeError("SlurmCluster is not started")
        return f"10.213.{self.subnet}.1"

    @property
    def node_names(self) -> list[str]:
        return list(self.nodes)

    def node_address(self, name: str) -> str:
        return self._node(name).address

    def netns_name(self, name: str) -> str:
        return self._node(name).netns

    def _node(self, name: str) -> Node:
        try:
            return self.nodes[name]
        except KeyError:
            raise KeyError(f"no node {name!r}; nodes: {', '.join(self.nodes)}") from None

    def env(self) -> dict[str, str]:
        """The environment for sbatch/squeue/scancel/scontrol/sinfo/srun."""
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf_path)
        for key in [k for k in env if k.startswith(("SLURM_", "SBATCH_", "SRUN_",
                                                     "SQUEUE_", "SINFO_"))]:
            if key != "SLURM_CONF":
                del env[key]
        return env

    # --------------------------------------------------------------- start

    def start(self) -> SlurmCluster:
        """Build the cluster and wait until every node is idle (``start_timeout``);
        on failure, stop what was started and raise with the daemons' log tails."""
        why = missing_requirements()
        if why:
            raise SlurmUnavailable(why)
        if self.base is not None:
            raise RuntimeError("SlurmCluster already started")
        began = time.monotonic()
        try:
            self._take_lock()
            if not self._atexit_registered:
                atexit.register(self.stop)
                self._atexit_registered = True
            remove_stale_runs()
            self._make_base()
            self._start_munged()
            self._make_network()
            self._write_conf()
            self._write_name_files()
            self._start_slurmctld()
            for node in self.nodes.values():
                self._start_slurmd(node)
            self.wait_nodes_state(self.node_names, "IDLE",
                                  timeout=max(1.0, self.start_timeout
                                              - (time.monotonic() - began)))
        except BaseException as exc:
            report = self.diagnostics()
            self.stop()
            if isinstance(exc, (SlurmClusterError, SlurmUnavailable)):
                raise SlurmClusterError(f"{exc}\n{report}") from exc
            raise
        self.start_seconds = time.monotonic() - began
        return self

    def _take_lock(self) -> None:
        RUN_ROOT.mkdir(mode=0o755, exist_ok=True)
        # munged wants every directory above its socket searchable by all.
        RUN_ROOT.chmod(0o755)
        # Locked under a temporary name, then renamed: a cleaner never sees the final
        # name unlocked while this run is alive.
        tmp = RUN_ROOT / f".{self.run_id}.tmp"
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, f"{os.getpid()}\n".encode())
        os.rename(tmp, RUN_ROOT / f"{self.run_id}.lock")
        self._lock_fd = fd

    def _make_base(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix=f"{self.run_id}-", dir=RUN_ROOT))
        # munged refuses a socket below a directory that not everybody can search.
        self.base.chmod(0o755)
        munge = pwd.getpwnam("munge")
        for sub in ("munge", "log", "ctld", "shared", "node", "etc"):
            self._path(sub).mkdir(mode=0o755)
        run = self._path("munge", "run")
        run.mkdir(mode=0o755)
        os.chown(run, munge.pw_uid, munge.pw_gid)
        key = self._path("munge", "munge.key")
        made = subprocess.run([_tool("mungekey"), "--create", "--bits=1024",
                               f"--keyfile={key}"], capture_output=True, text=True,
                              timeout=20)
        if made.returncode != 0:
            raise SlurmClusterError(f"mungekey failed: {made.stderr.strip()}")
        # munged wants its key owned by the user it runs as, readable by nobody else.
        os.chown(key, munge.pw_uid, munge.pw_gid)
        key.chmod(0o400)

    def _spawn(self, argv: Sequence[str], log_name: str, *, user: str | None = None
               ) -> subprocess.Popen:
        with open(self.log_dir / log_name, "ab") as log:
            proc = subprocess.Popen(
                list(argv), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, cwd=self.base, start_new_session=True,
                env=self._daemon_env(), user=user, group=user,
                extra_groups=[] if user else None,
                preexec_fn=_die_with_parent_hook())  # noqa: PLW1509 - it only calls prctl
        if self.service_pids is not None:
            self.service_pids.add(proc.pid)
        return proc

    def _daemon_env(self) -> dict[str, str]:
        return {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "SLURM_CONF": str(self.conf_path),
                "LANG": "C.UTF-8"}

    def _start_munged(self) -> None:
        run = self._path("munge", "run")
        self.munged = self._spawn([
            _tool("munged"), "--foreground",
            f"--key-file={self._path('munge', 'munge.key')}",
            f"--socket={self.munge_socket}",
            f"--pid-file={run / 'munged.pid'}",
            f"--seed-file={run / 'munged.seed'}",
            "--num-threads=4",
        ], "munged.log", user="munge")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.munged.poll() is not None:
                raise SlurmClusterError(f"munged exited with {self.munged.returncode}")
            if self.munge_socket.exists():
                probe = subprocess.run(
                    f"{_tool('munge')} -n -S {self.munge_socket} | "
                    f"{_tool('unmunge')} -S {self.munge_socket}",
                    shell=True, capture_output=True, text=True, timeout=10)
                if probe.returncode == 0:
                    return
            time.sleep(0.05)
        raise SlurmClusterError("munged did not answer within 15 s")

    def _make_network(self) -> None:
        # Two runs starting at once must not pick the same subnet: choose it and claim
        # it (the bridge's address) under a lock.
        with open(RUN_ROOT / ".network.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.subnet = _free_subnet()
            for i in range(1, self._node_count + 1):
                node = Node(i, self.run_id, self.subnet)
                self.nodes[node.name] = node
            _ip("link", "add", self.bridge, "type", "bridge", "forward_delay", "0",
                "stp_state", "0")
            _ip("addr", "add", f"{self.host_address}/24", "dev", self.bridge)
        # Frames between nodes stay out of the machine's iptables (br_netfilter would
        # hand them to a FORWARD chain that may drop them, as Docker's does).
        _ip("link", "set", self.bridge, "type", "bridge", "nf_call_iptables", "0",
            check=False)
        # The network ends at the host: a packet from a node to anything but the host's
        # own addresses (the local table, looked up first) meets this rule and is never
        # forwarded, whatever the machine's ip_forward says. The kernel answers such a
        # packet with an ICMP error only when forwarding is on for the interface it came
        # in on, so it is turned on for the bridge (after the rule, never without it):
        # a connection to the outside then fails at once instead of hanging.
        _ip("rule", "add", "iif", self.bridge, "priority", str(RULE_PRIORITY), "prohibit")
        try:
            Path(f"/proc/sys/net/ipv4/conf/{self.bridge}/forwarding").write_text("1")
        except OSError:
            pass
        _ip("link", "set", self.bridge, "up")
        for node in self.nodes.values():
            _ip("netns", "add", node.netns)
            node.netns_id = _netns_inode(f"/run/netns/{node.netns}")
            _ip("link", "add", node.veth, "type", "veth", "peer", "name", "eth0",
                "netns", node.netns)
            _ip("link", "set", node.veth, "master", self.bridge)
            _ip("link", "set", node.veth, "up")
            _ip("-n", node.netns, "link", "set", "lo", "up")
            _ip("-n", node.netns, "addr", "add", f"{node.address}/24", "dev", "eth0")
            _ip("-n", node.netns, "link", "set", "eth0", "up")
            _ip("-n", node.netns, "route", "add", "default", "via", self.host_address)

    def _write_conf(self) -> None:
        self.ctld_port = free_port(self.host_address)
        node_lines = [
            f"NodeName={n.name} NodeHostname={n.name} NodeAddr={n.address} "
            f"CPUs={self.cpus_per_node} RealMemory={self.real_memory_mb} State=UNKNOWN"
            for n in self.nodes.values()]
        spool = self._node_root / "slurmd"
        self.conf_path.write_text("\n".join([
            "# Written by tests/slurm_cluster.py; see docs/cluster-testing.md.",
            f"ClusterName=heron{self.run_id}",
            f"SlurmctldHost={CONTROLLER_NAME}({self.host_address})",
            f"SlurmctldPort={self.ctld_port}",
            f"SlurmdPort={SLURMD_PORT}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket},cred_expire={self.cred_expire}",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={self._path('ctld', 'state')}",
            f"SlurmctldPidFile={self._path('ctld', 'slurmctld.pid')}",
            f"SlurmctldLogFile={self.log_dir / 'slurmctld.log'}",
            "SlurmctldDebug=info",
            "MailProg=/bin/true",
            # The spool and pid file are in the node's private tmpfs (same path, other
            # contents on every node); the log is on the host so it outlives the node.
            f"SlurmdSpoolDir={spool}",
            f"SlurmdPidFile={spool / 'slurmd.pid'}",
            f"SlurmdLogFile={self.log_dir / 'slurmd-%n.log'}",
            "SlurmdDebug=info",
            "SlurmdParameters=config_overrides",
            "MpiDefault=none",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SwitchType=switch/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SchedulerType=sched/backfill",
            # Requeued jobs wait cred_expire, then the next scheduling pass (60 s and
            # backfill's 30 s by default): look at the queue every few seconds.
            "SchedulerParameters=bf_interval=2,sched_interval=5",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "ReturnToService=2",
            f"SlurmdTimeout={self.slurmd_timeout}",
            f"MessageTimeout={self.message_timeout}",
            f"KillWait={self.kill_wait}",
            "InactiveLimit=0",
            "MinJobAge=300",
            "JobRequeue=1",
            *node_lines,
            f"PartitionName=heron Nodes={','.join(self.nodes)} Default=YES "
            "MaxTime=INFINITE State=UP OverSubscribe=NO",
            "",
        ]))

    def _start_slurmctld(self) -> None:
        self._path("ctld", "state").mkdir(mode=0o755, exist_ok=True)
        # slurmctld only runs where its host name is SlurmctldHost's: give it its own
        # hostname namespace rather than renaming the machine.
        self.slurmctld = self._spawn([
            _tool("unshare"), "--uts", "sh", "-c",
            f'hostname {CONTROLLER_NAME} && exec "$0" "$@"',
            SLURMCTLD, "-D", "-c", "-f", str(self.conf_path),
        ], "slurmctld.out")

    def _write_name_files(self) -> None:
        """/etc/hosts and /etc/resolv.conf for the nodes: every node and the controller
        by name, and no name server (the network ends at the bridge, so the machine's
        would only make every unknown name wait for a timeout)."""
        hosts = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
                 f"{self.host_address}\t{CONTROLLER_NAME}"]
        hosts += [f"{n.address}\t{n.name}" for n in self.nodes.values()]
        self._path("etc", "hosts").write_text("\n".join(hosts) + "\n")
        self._path("etc", "resolv.conf").write_text(
            "# no name server inside the test cluster: unknown names fail at once\n"
            "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")

    def _start_slurmd(self, node: Node) -> None:
        root, etc = self._node_root, self._path("etc")
        script = " && ".join([
            f"hostname {node.name}",
            # one tmpfs per node: slurmd's spool and the node's /tmp
            f"mount -t tmpfs -o size={self.local_size},mode=0755 heron-{node.name} {root}",
            f"mkdir -p {root}/slurmd {root}/tmp",
            f"chmod 1777 {root}/tmp",
            f"mount --bind {root}/tmp /tmp",
            "mount -t tmpfs -o size=64m,mode=1777 heron-shm /dev/shm",
            f"mount --bind {etc}/hosts /etc/hosts",
            f"mount --bind {etc}/resolv.conf /etc/resolv.conf",
            'exec "$0" "$@"'])
        # nsenter joins only the network namespace (``ip netns exec`` would also remount
        # /sys, on which slurmd then fails); unshare gives the node its own hostname and
        # mount namespace, private so its mounts are seen nowhere else.
        node.slurmd = self._spawn([
            _tool("nsenter"), f"--net=/run/netns/{node.netns}",
            _tool("unshare"), "--uts", "--mount", "--propagation", "private",
            "sh", "-c", script, SLURMD, "-D", "-N", node.name, "-f", str(self.conf_path),
        ], f"slurmd-{node.name}.out")

    # --------------------------------------------------------------- clients

    def run(self, *argv: str, timeout: float = 30.0, check: bool = True
            ) -> subprocess.CompletedProcess:
        """Run a Slurm client command (``run("squeue", "-h")``) against this cluster."""
        try:
            done = subprocess.run(list(argv), capture_output=True, text=True,
                                  env=self.env(), timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise SlurmClusterError(f"{' '.join(argv)} took more than {timeout:g}s"
                                    ) from exc
        if check and done.returncode != 0:
            raise SlurmClusterError(f"{' '.join(argv)} exited with {done.returncode}: "
                                    f"{(done.stderr or done.stdout).strip()}")
        return done

    def sbatch(self, *args: str, script: str | None = None, timeout: float = 30.0) -> int:
        """Submit a batch job (``sbatch --parsable ARGS``, the script on stdin when given)
        and return its job id."""
        try:
            done = subprocess.run(["sbatch", "--parsable", *args],
                                  input=script if script is not None else "",
                                  capture_output=True, text=True, env=self.env(),
                                  timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise SlurmClusterError(f"sbatch took more than {timeout:g}s") from exc
        if done.returncode != 0:
            raise SlurmClusterError(f"sbatch {' '.join(args)} exited with "
                                    f"{done.returncode}: {done.stderr.strip()}")
        return int(done.stdout.strip().split(";")[0])

    @staticmethod
    def _fields(line: str) -> dict[str, str]:
        fields = {}
        for token in line.split():
            key, sep, value = token.partition("=")
            if sep:
                fields[key] = value
        return fields

    def job(self, job_id: int) -> dict[str, str]:
        """``scontrol show job`` as a dict (JobState, NodeList, Reason, Restarts...);
        empty once Slurm forgot the job (MinJobAge after it ended)."""
        done = self.run("scontrol", "show", "job", "--oneliner", str(job_id), check=False)
        if done.returncode != 0:
            return {}
        return self._fields(done.stdout)

    def nodes_info(self) -> dict[str, dict[str, str]]:
        """``scontrol show nodes`` per node name (State is e.g. IDLE, ALLOCATED,
        DOWN+NOT_RESPONDING, IDLE+DRAIN)."""
        done = self.run("scontrol", "show", "nodes", "--oneliner")
        info = {}
        for line in done.stdout.splitlines():
            fields = self._fields(line)
            if "NodeName" in fields:
                info[fields["NodeName"]] = fields
        return info

    def node_state(self, name: str) -> str:
        return self.nodes_info().get(name, {}).get("State", "")

    def wait_nodes_state(self, names: Iterable[str], state: str, *, timeout: float,
                         exact: bool = True) -> float:
        """Wait until every node in ``names`` is in ``state`` (``exact``: the whole state
        string, e.g. IDLE; else one of its '+' parts, e.g. DOWN or NOT_RESPONDING);
        return the seconds it took, raise SlurmClusterError with the states otherwise."""
        names = list(names)
        began = time.monotonic()
        deadline = began + timeout
        states: dict[str, str] = {}
        while True:
            try:
                info = self.nodes_info()
                states = {n: info.get(n, {}).get("State", "?") for n in names}
            except SlurmClusterError as exc:
                states = {n: f"? ({exc})" for n in names}
            if all((s == state) if exact else (state in s.split("+"))
                   for s in states.values()):
                return time.monotonic() - began
            self._check_daemons()
            if time.monotonic() >= deadline:
                raise SlurmClusterError(
                    f"nodes not {state} after {timeout:g}s: "
                    + ", ".join(f"{n}={s}" for n, s in states.items()))
            time.sleep(0.2)

    def wait_job(self, job_id: int, predicate, *, timeout: float) -> dict[str, str]:
        """Poll ``job(job_id)`` until ``predicate(fields)`` is true; return the fields."""
        deadline = time.monotonic() + timeout
        fields: dict[str, str] = {}
        while True:
            fields = self.job(job_id)
            if predicate(fields):
                return fields
            if time.monotonic() >= deadline:
                raise SlurmClusterError(
                    f"job {job_id} not as expected after {timeout:g}s: "
                    + " ".join(f"{k}={fields.get(k)}" for k in
                               ("JobState", "Reason", "NodeList", "Restarts")))
            time.sleep(0.2)

    def _check_daemons(self) -> None:
        for what, proc in (("munged", self.munged), ("slurmctld", self.slurmctld)):
            if proc is not None and proc.poll() is not None:
                raise SlurmClusterError(f"{what} exited with {proc.returncode}")

    # ------------------------------------------------------------- nodes

    def pids_in(self, name: str) -> set[int]:
        """Every live process in node ``name``'s network namespace (slurmd, slurmstepd,
        jobs), found by the namespace's inode, not by what Slurm says."""
        node = self._node(name)
        return set() if node.netns_id is None else pids_in_netns(node.netns_id)

    def node_of_pid(self, pid: int) -> str | None:
        """The node whose network namespace process ``pid`` is in (None: the host's or
        gone)."""
        ident = _netns_inode(f"/proc/{pid}/ns/net")
        for node in self.nodes.values():
            if ident is not None and ident == node.netns_id:
                return node.name
        return None

    def slurmd_pid(self, name: str) -> int | None:
        proc = self._node(name).slurmd
        return None if proc is None or proc.poll() is not None else proc.pid

    def node_command(self, name: str, *argv: str) -> list[str]:
        """An argv that runs ``argv`` on node ``name``: in its network namespace, and
        while its slurmd lives also in its hostname and mount namespaces (its tmpfs)."""
        pid = self.slurmd_pid(name)
        if pid is not None:
            return [_tool("nsenter"), "-t", str(pid), "-n", "-u", "-m", "--", *argv]
        return [_tool("nsenter"), f"--net=/run/netns/{self._node(name).netns}", "--",
                *argv]

    def node_run(self, name: str, *argv: str, timeout: float = 30.0
                 ) -> subprocess.CompletedProcess:
        """Run ``argv`` on node ``name`` (see node_command) and wait for it."""
        return subprocess.run(self.node_command(name, *argv), capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                              env=self.env())

    def node_path(self, name: str, path: str | os.PathLike) -> Path:
        """Where the host can read node ``name``'s view of ``path`` (its private tmpfs
        included) while its slurmd lives: ``/proc/<slurmd>/root/<path>``."""
        pid = self.slurmd_pid(name)
        if pid is None:
            raise SlurmClusterError(f"{name} is down: its private files are gone")
        return Path(f"/proc/{pid}/root") / Path(path).relative_to("/")

    def kill_node(self, name: str) -> None:
        """Simulate the death of node ``name``: SIGKILL every process in its namespace
        (slurmd, slurmstepd, the jobs). Its private tmpfs goes with them; its address
        stays (nothing answers there any more), as a crashed machine's would."""
        node = self._node(name)
        left = _kill_all(lambda: self.pids_in(name))
        self._reap(node)
        if left:
            raise SlurmClusterError(f"{name}: processes survived SIGKILL: {sorted(left)}")

    def _reap(self, node: Node) -> None:
        proc, node.slurmd = node.slurmd, None
        if proc is not None:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
            if self.service_pids is not None:
                self.service_pids.discard(proc.pid)

    def restart_node(self, name: str) -> None:
        """Start node ``name``'s slurmd again (a rebooted machine: new hostname and mount
        namespace, empty tmpfs). With ReturnToService=2 Slurm takes it back once it
        registers; call resume() to be sure and wait_nodes_state() to see it idle."""
        node = self._node(name)
        if node.slurmd is not None and node.slurmd.poll() is None:
            raise SlurmClusterError(f"{name} is running: kill_node() it first")
        self._reap(node)
        self._start_slurmd(node)

    def resume(self, name: str) -> None:
        """``scontrol update nodename=NAME state=resume`` (a node that already returned to
        service on its own is left as it is)."""
        done = self.run("scontrol", "update", f"nodename={name}", "state=resume",
                        check=False)
        if done.returncode != 0 and "Invalid node state" not in done.stderr:
            raise SlurmClusterError(f"scontrol update nodename={name} state=resume: "
                                    f"{done.stderr.strip()}")

    def partition(self, name: str) -> None:
        """Cut node ``name`` off the network (the bridge's end of its veth down): nothing
        passes either way, its processes go on. Slurm calls it NOT_RESPONDING, then DOWN
        (~15-25 s), and fails or requeues its jobs while they still run there; after
        heal() the node stays DOWN until resume() (Slurm does not ping DOWN nodes), and
        it then kills what still ran of those jobs within about a second."""
        _ip("link", "set", self._node(name).veth, "down")
        self._node(name).partitioned = True

    def heal(self, name: str) -> None:
        """Undo partition(name)."""
        _ip("link", "set", self._node(name).veth, "up")
        self._node(name).partitioned = False

    def return_to_service(self, name: str, *, timeout: float = 60.0) -> float:
        """Whatever was done to node ``name``, make it a working node again: heal it if
        partitioned, restart its slurmd if it is dead, resume it, and wait until Slurm
        reports it without DOWN, DRAIN or NOT_RESPONDING (IDLE, or MIXED/ALLOCATED when
        jobs run there). Returns the seconds it took. For a test's ``finally``."""
        began = time.monotonic()
        node = self._node(name)
        if node.partitioned:
            self.heal(name)
        if node.slurmd is None or node.slurmd.poll() is not None:
            self.restart_node(name)
        deadline = began + timeout
        bad = {"DOWN", "DRAIN", "DRAINED", "DRAINING", "NOT_RESPONDING", "FAIL", "UNKNOWN"}
        state = ""
        resumed_at = 0.0
        while True:
            state = self.node_state(name)
            if state and not bad & set(state.split("+")):
                return time.monotonic() - began
            if time.monotonic() - resumed_at > 2:
                self.resume(name)
                resumed_at = time.monotonic()
            self._check_daemons()
            if time.monotonic() >= deadline:
                raise SlurmClusterError(f"{name} still {state} after {timeout:g}s\n"
                                        f"{self.diagnostics()}")
            time.sleep(0.2)

    # --------------------------------------------------------------- stop

    def diagnostics(self, lines: int = 25) -> str:
        """The end of every daemon's log, for failure messages."""
        if self.base is None or not self.log_dir.is_dir():
            return ""
        parts = []
        for log in sorted(self.log_dir.iterdir()):
            twin = log.with_suffix(".log")
            if log.suffix == ".out" and twin.exists() and twin.stat().st_size:
                continue  # the daemon's own log has the same lines
            try:
                tail = log.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            if tail:
                parts.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(parts)

    def stop(self) -> None:
        """Kill every daemon and every process in the nodes' namespaces, delete the
        namespaces, veths and bridge, remove the base directory and the lock. Safe to
        call twice, and after a start that failed half-way."""
        for node in self.nodes.values():
            if node.netns_id is not None:
                _kill_all(lambda node=node: pids_in_netns(node.netns_id))
            self._reap(node)
        for proc in (self.slurmctld, self.munged):
            if proc is None:
                continue
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
            if self.service_pids is not None:
                self.service_pids.discard(proc.pid)
        self.slurmctld = self.munged = None
        if self.base is not None:
            # Anything else that still names this run's files (a client command).
            _kill_all(lambda: _pids_with_cmdline(str(self.base)))
        for node in self.nodes.values():
            if os.path.exists(f"/run/netns/{node.netns}"):
                _ip("netns", "delete", node.netns, check=False)
            if os.path.exists(f"/sys/class/net/{node.veth}"):
                _ip("link", "delete", node.veth, check=False)
        if os.path.exists(f"/sys/class/net/{self.bridge}"):
            _ip("link", "delete", self.bridge, check=False)
        _delete_rules(self.run_id)
        if self.base is not None:
            shutil.rmtree(self.base, ignore_errors=True)
            self.base = None
        if self._lock_fd is not None:
            try:
                (RUN_ROOT / f"{self.run_id}.lock").unlink()
            except FileNotFoundError:
                pass
            os.close(self._lock_fd)
            self._lock_fd = None

    def leftovers(self) -> list[str]:
        """What of this run still exists after stop() (empty when teardown was clean)."""
        return run_leftovers(self.run_id, [n.netns_id for n in self.nodes.values()
                                           if n.netns_id is not None])

    def __enter__(self) -> SlurmCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
