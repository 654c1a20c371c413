"""A node that dies and comes back with its disk: a real machine's local disk keeps what
its jobs wrote (secrets a job never got to remove, slurmd's spool) across a crash, where
``kill_node`` + ``restart_node`` give the node an empty tmpfs.

    disk = hold_disk(cluster, "node2")     # before the death: keeps its tmpfs reachable
    cluster.kill_node("node2")
    saved = disk.save()                    # what the disk held when the node died
    restart_with_disk(cluster, "node2", saved)
    cluster.return_to_service("node2")

``hold_disk`` opens the node's mount namespace, which then outlives the node's processes
(a namespace lives while a file descriptor names it); ``save`` copies the node's tmpfs
(its ``/tmp`` and slurmd's spool) out of it, ``cp -a``, owners and modes kept, into the
cluster's base directory (removed by ``stop()``), and lets the namespace go.
``restart_with_disk`` starts the node's slurmd as ``restart_node`` does, with the saved
files copied into its new tmpfs before slurmd starts, so slurmd finds its spool.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.slurm.host import SlurmClusterError, tool


class HeldDisk:
    def __init__(self, cluster, name: str) -> None:
        pid = cluster.slurmd_pid(name)
        if pid is None:
            raise SlurmClusterError(f"{name} is down: nothing to hold")
        self.cluster, self.name = cluster, name
        self.fd: int | None = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY)

    def save(self) -> Path:
        """Copy the node's tmpfs out of its (dead) mount namespace; returns the copy."""
        if self.fd is None:
            raise SlurmClusterError("already saved")
        dest = self.cluster._path(f"disk-{self.name}")
        dest.mkdir(mode=0o700)
        root = self.cluster._node_root
        try:
            done = subprocess.run(
                [tool("nsenter"), f"--mount=/proc/{os.getpid()}/fd/{self.fd}",
                 "cp", "-a", f"{root}/.", str(dest)],
                capture_output=True, text=True, timeout=60, pass_fds=(self.fd,))
        finally:
            os.close(self.fd)
            self.fd = None
        if done.returncode != 0:
            raise SlurmClusterError(f"saving {self.name}'s disk: {done.stderr.strip()}")
        return dest


def hold_disk(cluster, name: str) -> HeldDisk:
    return HeldDisk(cluster, name)


def restart_with_disk(cluster, name: str, saved: Path) -> None:
    """restart_node(name), its new tmpfs holding ``saved`` before slurmd starts."""
    node = cluster._node(name)
    if node.slurmd is not None and node.slurmd.poll() is None:
        raise SlurmClusterError(f"{name} is running: kill_node() it first")
    cluster._reap(node)
    cluster._start_slurmd(node, restore=saved)
