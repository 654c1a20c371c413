"""How ``SlurmCluster.start()`` builds each piece, in the order it calls them: the run's
lock, the base directory and munge key, ``munged``, the bridge and the nodes' network
namespaces, ``slurm.conf``, the nodes' name files, ``slurmctld`` and each node's
``slurmd``. A mixin of ``SlurmCluster`` (tests/slurm/cluster.py), whose layout
(``_path``, ``log_dir``, ``conf_path``...) these methods use; kept apart because each
piece needs a page of reasons (docs/cluster-testing.md tells more).
"""

from __future__ import annotations

import fcntl
import os
import pwd
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tests.slurm.host import (
    CONTROLLER_NAME,
    RULE_PRIORITY,
    RUN_ROOT,
    SLURMCTLD,
    SLURMD,
    SLURMD_PORT,
    SlurmClusterError,
    ip,
    tool,
)
from tests.slurm.namespaces import Node, free_subnet, netns_inode
from tests.zookeeper_server import _die_with_parent_hook, free_port


class ClusterDaemons:
    """The pieces ``start()`` builds (see the module's docstring)."""

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
        for sub in ("munge", "log", "ctld", "shared", "node", "etc", "host-tmp"):
            self._path(sub).mkdir(mode=0o755)
        run = self._path("munge", "run")
        run.mkdir(mode=0o755)
        os.chown(run, munge.pw_uid, munge.pw_gid)
        key = self._path("munge", "munge.key")
        made = subprocess.run([tool("mungekey"), "--create", "--bits=1024",
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
            tool("munged"), "--foreground",
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
                    f"{tool('munge')} -n -S {self.munge_socket} | "
                    f"{tool('unmunge')} -S {self.munge_socket}",
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
            self.subnet = free_subnet()
            for i in range(1, self._node_count + 1):
                node = Node(i, self.run_id, self.subnet)
                self.nodes[node.name] = node
            ip("link", "add", self.bridge, "type", "bridge", "forward_delay", "0",
                "stp_state", "0")
            ip("addr", "add", f"{self.host_address}/24", "dev", self.bridge)
        # Frames between nodes stay out of the machine's iptables (br_netfilter would
        # hand them to a FORWARD chain that may drop them, as Docker's does).
        ip("link", "set", self.bridge, "type", "bridge", "nf_call_iptables", "0",
            check=False)
        # The network ends at the host: a packet from a node to anything but the host's
        # own addresses (the local table, looked up first) meets this rule and is never
        # forwarded, whatever the machine's ip_forward says. The kernel answers such a
        # packet with an ICMP error only when forwarding is on for the interface it came
        # in on, so it is turned on for the bridge (after the rule, never without it):
        # a connection to the outside then fails at once instead of hanging.
        ip("rule", "add", "iif", self.bridge, "priority", str(RULE_PRIORITY), "prohibit")
        try:
            Path(f"/proc/sys/net/ipv4/conf/{self.bridge}/forwarding").write_text("1")
        except OSError:
            pass
        ip("link", "set", self.bridge, "up")
        for node in self.nodes.values():
            ip("netns", "add", node.netns)
            node.netns_id = netns_inode(f"/run/netns/{node.netns}")
            ip("link", "add", node.veth, "type", "veth", "peer", "name", "eth0",
                "netns", node.netns)
            ip("link", "set", node.veth, "master", self.bridge)
            ip("link", "set", node.veth, "up")
            ip("-n", node.netns, "link", "set", "lo", "up")
            ip("-n", node.netns, "addr", "add", f"{node.address}/24", "dev", "eth0")
            ip("-n", node.netns, "link", "set", "eth0", "up")
            ip("-n", node.netns, "route", "add", "default", "via", self.host_address)

    def _write_conf(self) -> None:
        self.ctld_port = free_port(self.host_address)
        node_lines = [
            f"NodeName={n.name} NodeHostname={n.name} NodeAddr={n.address} "
            f"CPUs={self.cpus_per_node} RealMemory={self.real_memory_mb} State=UNKNOWN"
            for n in self.nodes.values()]
        spool = self._node_root / "slurmd"
        self.conf_path.write_text("\n".join([
            "# Written by tests/slurm/daemons.py; see docs/cluster-testing.md.",
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
            tool("unshare"), "--uts", "sh", "-c",
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

    def _node_setup(self, node: Node, *, restore: Path | None = None) -> list[str]:
        """The shell steps that make ``node``'s file system before its slurmd starts.

        A tmpfs of its own holds slurmd's spool and becomes the node's ``/tmp`` (with
        ``restore``, a saved disk's files are copied into it first); ``/dev/shm`` is
        private; /etc/hosts and resolv.conf are the cluster's. Software the host keeps
        under ``/tmp`` (a checkout in ``/tmp/x``, a virtualenv there: ``software_paths``)
        is bound at the same path into the node's ``/tmp``, as software installed on every
        node would be: the host's ``/tmp`` is bound aside first (in the node's private
        mount namespace only), since the node's own ``/tmp`` hides it."""
        root, etc, aside = self._node_root, self._path("etc"), self._path("host-tmp")
        steps = [f"hostname {node.name}",
                 f"mount -t tmpfs -o size={self.local_size},mode=0755 heron-{node.name} {root}"]
        if restore is not None:
            steps.append(f"cp -a {restore}/. {root}/")
        steps += [f"mkdir -p {root}/slurmd {root}/tmp", f"chmod 1777 {root}/tmp"]
        if self.software_paths:
            steps.append(f"mount --bind /tmp {aside}")
        steps += [f"mount --bind {root}/tmp /tmp",
                  "mount -t tmpfs -o size=64m,mode=1777 heron-shm /dev/shm"]
        for path in self.software_paths:
            inside = aside / path.relative_to("/tmp")
            steps += [f"mkdir -p {path}", f"mount --bind {inside} {path}"]
        if self.software_paths:
            steps.append(f"umount {aside}")
        steps += [f"mount --bind {etc}/hosts /etc/hosts",
                  f"mount --bind {etc}/resolv.conf /etc/resolv.conf"]
        return steps

    def _start_slurmd(self, node: Node, *, restore: Path | None = None) -> None:
        script = " && ".join([*self._node_setup(node, restore=restore), 'exec "$0" "$@"'])
        # nsenter joins only the network namespace (``ip netns exec`` would also remount
        # /sys, on which slurmd then fails); unshare gives the node its own hostname and
        # mount namespace, private so its mounts are seen nowhere else.
        node.slurmd = self._spawn([
            tool("nsenter"), f"--net=/run/netns/{node.netns}",
            tool("unshare"), "--uts", "--mount", "--propagation", "private",
            "sh", "-c", script, SLURMD, "-D", "-N", node.name, "-f", str(self.conf_path),
        ], f"slurmd-{node.name}.out")
