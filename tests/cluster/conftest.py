"""Fixtures for tests that need a real cluster manager: a three-node Slurm cluster
(tests/slurm/) and a ZooKeeper server its nodes can reach.

Both are module-scoped: a module that asks for them gets its own cluster (~1 s to build),
and a test that breaks a node returns it to service before it ends, so the next test of
the module finds every node idle. Skipped, with the reason, only on a machine without
root, network namespaces or the Slurm packages (scripts/test.sh installs them; CI runs as
root and so runs these tests).
"""

from __future__ import annotations

import contextlib

import pytest

from tests.conftest import SESSION_SERVICE_PIDS, session_service
from tests.unavailable import unavailable


@contextlib.contextmanager
def running_slurm_cluster(**options):
    """A started three-node ``tests.slurm.SlurmCluster`` (node1..node3, 4 CPUs
    each, every node idle), stopped afterwards and checked to leave nothing behind
    (namespace, link, mount, process, file). ``options`` go to SlurmCluster (e.g.
    ``real_memory_mb=1000`` for small nodes). Skips the test without root, network
    namespaces or the Slurm packages."""
    from tests.slurm import SlurmCluster, missing_requirements

    why = missing_requirements()
    if why:
        unavailable(f"no Slurm cluster on this machine: {why}")
    cluster = SlurmCluster(**{"nodes": 3, **options}, service_pids=SESSION_SERVICE_PIDS)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
    left = cluster.leftovers()
    if left:
        pytest.fail(f"the Slurm cluster left things behind: {'; '.join(left)}")


@contextlib.contextmanager
def zookeeper_on(host: str):
    """A ZooKeeper server listening on ``host`` (the cluster's bridge address, reachable
    from every node); ``.hosts`` is "HOST:PORT"."""
    from tests.zookeeper_server import ZooKeeperServer

    with session_service(ZooKeeperServer(host=host), "ZooKeeper") as server:
        yield server


@pytest.fixture(scope="module")
def slurm_cluster():
    """The module's cluster (see running_slurm_cluster)."""
    with running_slurm_cluster() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def slurm_zookeeper(slurm_cluster):
    """ZooKeeper on the module's cluster's bridge address."""
    with zookeeper_on(slurm_cluster.host_address) as server:
        yield server
