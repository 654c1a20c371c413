"""Running commands on one node of the test cluster, and breaking and mending nodes: kill
one (``kill_node``), cut it off (``partition``), bring it back (``restart_node``,
``heal``, ``resume``, or all of it: ``return_to_service``). A mixin of ``SlurmCluster``
(tests/slurm/cluster.py), which holds the nodes and their daemons.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from tests.slurm.host import SlurmClusterError, ip, tool
from tests.slurm.namespaces import Node, kill_all, netns_inode, pids_in_netns


class NodeControl:
    """Commands on a node, and a node's failures and repairs (see the module's docstring)."""

    def pids_in(self, name: str) -> set[int]:
        """Every live process in node ``name``'s network namespace (slurmd, slurmstepd,
        jobs), found by the namespace's inode, not by what Slurm says."""
        node = self._node(name)
        return set() if node.netns_id is None else pids_in_netns(node.netns_id)

    def node_of_pid(self, pid: int) -> str | None:
        """The node whose network namespace process ``pid`` is in (None: the host's or
        gone)."""
        ident = netns_inode(f"/proc/{pid}/ns/net")
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
            return [tool("nsenter"), "-t", str(pid), "-n", "-u", "-m", "--", *argv]
        return [tool("nsenter"), f"--net=/run/netns/{self._node(name).netns}", "--",
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
        left = kill_all(lambda: self.pids_in(name))
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
        ip("link", "set", self._node(name).veth, "down")
        self._node(name).partitioned = True

    def heal(self, name: str) -> None:
        """Undo partition(name)."""
        ip("link", "set", self._node(name).veth, "up")
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
