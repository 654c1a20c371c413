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
  node would be: pass data through the shared directory only. A checkout or virtualenv
  the host keeps under ``/tmp`` is bound into the node's ``/tmp`` at the same path
  (``host.software_under_tmp``), so the suite runs from a clone anywhere;
- ``slurmctld`` on the host's side of the bridge, in its own hostname namespace so it can
  be called ``hctl`` without renaming the machine.

Every daemon is told to die with the thread that started it (PR_SET_PDEATHSIG), an
``atexit`` hook stops the cluster, and names are unique per run: a run holds an flock on
``/run/heron-slurm/<run>.lock`` while it lives, and ``start()`` first removes what earlier
runs that no longer hold theirs left behind (processes in their namespaces, namespaces,
links, routing rules, base directories).

The package, by what each part does: ``cluster`` (``SlurmCluster``, what tests use),
``daemons`` (how ``start()`` builds each piece: lock, base directory, munge, network,
``slurm.conf``, the daemons), ``nodes`` (running commands on a node, breaking and mending
it), ``namespaces`` (processes and namespaces found through /proc, routing rules, a
node's names), ``leftovers`` (what a run left behind, and removing what dead runs left)
and ``host`` (what this machine must have, and the tools run on it).
"""

from tests.slurm.cluster import SlurmCluster
from tests.slurm.host import SlurmClusterError, SlurmUnavailable, missing_requirements
from tests.slurm.leftovers import remove_stale_runs, run_leftovers
from tests.slurm.namespaces import pids_in_netns

__all__ = ["SlurmCluster", "SlurmClusterError", "SlurmUnavailable", "missing_requirements",
           "pids_in_netns", "remove_stale_runs", "run_leftovers"]
