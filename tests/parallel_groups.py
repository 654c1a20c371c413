"""Which tests must run on the same pytest-xdist worker, decided from the code.

CI runs the suite on two workers (``--dist loadgroup``, scripts/test.sh). Most tests are
independent: each has its own temporary directory, ports picked by the OS, and its
worker's own session servers (ZooKeeper, Redis, Kafka, Spark). Two kinds are not:

- **the Slurm test cluster** (``tests/slurm``): its nodes are network and mount
  namespaces on one host bridge, each module starts one. Two at once would compete for
  the bridge and the daemons' ports, and a cluster is heavy enough to slow the other
  worker's timed waits; every test that uses one goes to the group ``slurm``, so clusters
  start one after another;
- **tests sharing a fixture wider than a test** (module, class or package scope: a
  running topology the tracker tests read, the conformance catalogue's runs, a Spark
  standalone cluster): split over two workers, each would build the fixture again, so
  they stay together in a group named after the fixture's module or package.

Everything else has no group, and xdist hands it to whichever worker is free.
"""

from __future__ import annotations

import pytest

#: Fixtures that start a Slurm test cluster (or need one running).
SLURM_FIXTURES = frozenset({"slurm_cluster", "slurm_zookeeper", "running_slurm_cluster"})

#: Scopes wider than one test, broadest first.
_SHARED_SCOPES = ("package", "module", "class")


def parallel_group(item: pytest.Item) -> str | None:
    """The xdist group ``item`` must share a worker with, or None if it can go anywhere."""
    names = set(getattr(item, "fixturenames", ()))
    if names & SLURM_FIXTURES or _names_slurm(item):
        return "slurm"
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    module = item.nodeid.split("::", 1)[0]
    widest: tuple[int, str] | None = None
    for name in names:
        definitions = info.name2fixturedefs.get(name)
        if not definitions:
            continue
        fixture = definitions[-1]
        scope = fixture.scope if isinstance(fixture.scope, str) else fixture.scope.value
        if scope not in _SHARED_SCOPES:
            continue
        rank = _SHARED_SCOPES.index(scope)
        key = f"package:{fixture.baseid or '.'}" if scope == "package" else f"module:{module}"
        if widest is None or rank < widest[0]:
            widest = (rank, key)
    return widest[1] if widest else None


def _names_slurm(item: pytest.Item) -> bool:
    """Tests that start a cluster through ``tests.slurm`` themselves, not via a fixture."""
    return item.nodeid.startswith("tests/cluster/")
