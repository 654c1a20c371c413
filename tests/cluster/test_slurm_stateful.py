"""Effectively-once on the real three-node Slurm cluster (tests/slurm/, issue 29): the
node running a counting bolt's container dies mid-run, Slurm runs the container again on
another node, the whole topology rolls back to its last consistent checkpoint and
replays, and the final counts equal the input's, word for word.

The topology is the stateful word count of the single-machine tests (tests/cluster/
projects/stateful reuses tests/e2e/heron/projects/stateful's parts): a spout keeping
its position in state, a split, a fields-grouped counting bolt keeping its counts in
state, every checkpoint one second apart. Its checkpoints go where the cluster's
``stateful.yaml`` says (a directory every node mounts): the moved container must read
its task's state there, since its old node's disk died with it. The counting bolt's
``(word, count)`` updates go through the file sink, committed exactly once into the
shared directory, so two things are checked: the largest count committed per word is the
word's total (a count restored empty or counted twice would show), and every update
``(word, 1..total)`` is committed once and nothing else is (a replay that escaped the
rollback would show twice).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

from engine.submitter.launcher import log_tail
from tests.cluster.test_slurm_failures import executor_logs
from tests.cluster.test_slurm_topology import (  # noqa: F401
    SlurmTopology,
    bring_back,
    container_nodes,
    forget_projects,
    job_of,
    state_of,
    wait_until,
)

pytestmark = pytest.mark.timeout(300)

PROJECT = Path(__file__).resolve().parent / "projects" / "stateful"
NAME = "stateful_cluster_wordcount"
E2E_SRC = Path(__file__).resolve().parents[1] / "e2e" / "heron" / "projects" / "stateful" / "src"
sys.path.insert(0, str(E2E_SRC))
try:
    from e2e_stateful_parts import expected_counts  # noqa: E402
finally:
    sys.path.remove(str(E2E_SRC))


@pytest.fixture(autouse=True)
def reap_schedulers(slurm_cluster):
    """tests/cluster/test_slurm_topology.py's fixture of that name (``heron submit`` runs
    in this process, so each detached scheduler service is our child: wait for the ones
    that exited after ``heron kill``, end any still running), except that the cluster's
    own daemons are left to the cluster: the node this test kills and brings back gets a
    new slurmd, a child of this process until the cluster stops, and waiting for it to
    exit would only time out (30 s)."""
    before = {p.pid for p in psutil.Process().children()}
    yield
    daemons = {node.slurmd.pid for node in slurm_cluster.nodes.values()
               if node.slurmd is not None}
    for child in psutil.Process().children():
        if child.pid in before or child.pid in daemons:
            continue
        try:
            child.wait(30)
        except psutil.TimeoutExpired:
            child.kill()
            child.wait(5)
        except psutil.Error:
            pass


def committed(out: Path) -> list[tuple[str, int]]:
    """Every committed ``(word, count)`` record of the file sink, in no order."""
    from compat.connectors import read_committed

    return [tuple(json.loads(line)) for line in read_committed(out)] if out.exists() else []


def largest(records: list[tuple[str, int]]) -> dict[str, int]:
    best: Counter = Counter()
    for word, count in records:
        best[word] = max(best[word], count)
    return dict(best)


def tmanager_figures(topology: SlurmTopology) -> dict[str, str]:
    """The Topology Master's checkpoint figures (``heron metrics --json``), {} if none yet."""
    result = topology.heron("metrics", NAME, "--json")
    try:
        return json.loads(result.output).get("__tmanager__/heron-tmanager", {}) or {}
    except ValueError:
        return {}


def count_containers(topology: SlurmTopology) -> dict[int, set[str]]:
    """container -> the components it holds, for the containers holding ``count``."""
    with state_of(topology) as state:
        packing = state.get("packingplans", NAME)
    out = {}
    for container in packing.container_plans:
        components = {i.component_name for i in container.instance_plans}
        if "count" in components:
            out[container.id] = components
    return out


def test_counts_are_exact_when_the_node_of_a_counting_bolt_dies(slurm_cluster, slurm_zookeeper,
                                                                 tmp_path):
    # 2,400 sentences (about 7,200 words) at most 33 a second (over 70 s of them) until
    # the moved container has restored and the topology checkpoints again: the spout is
    # still emitting well after the node dies, and replays what the rollback took back;
    # then fast to the end (the flag file, in the directory every node mounts)
    n = 2400
    topology = SlurmTopology(slurm_cluster, slurm_zookeeper, tmp_path, n=n,
                             project=PROJECT, name=NAME)
    out = topology.store / "out"
    fast = topology.store / "fast"
    topology.options += ["-o", f"e2e.sentences={n}", "-o", "e2e.per_call=1",
                         "-o", "e2e.pause_ms=30", "-o", f"e2e.fast_flag={fast}",
                         "-o", f"heron.connectors.file.sink.dir={out}",
                         "-o", "heron.resources.instance.cpu=0.25"]
    wanted = expected_counts(n)
    topology.submit(workers=3)
    node = None
    try:
        assert wait_until(lambda: len(committed(out)) >= 300, 120), \
            (topology.status(), tmanager_figures(topology), executor_logs(slurm_cluster),
             log_tail(topology.working_dir / "logs" / "scheduler.log", 20))
        before = int(tmanager_figures(topology).get("__checkpoints-completed", "0"))
        assert before >= 1, tmanager_figures(topology)
        jobs = {j["container"]: j for j in topology.status()["jobs"]}
        tm_node = jobs[0]["node"]
        holders = count_containers(topology)
        # a counting bolt's container on a node without the Topology Master (the Topology
        # Master's own death is another test's), without the spout if there is a choice
        victims = sorted(holders, key=lambda c: (jobs[c]["node"] == tm_node,
                                                 "sentences" in holders[c], c))
        container = victims[0]
        job = job_of(topology, container)
        assert job and job["state"] == "RUNNING", topology.status()
        node = job["node"]
        assert container_nodes(topology, container) == {node}
        progress = largest(committed(out))
        assert progress != wanted, "the run ended before the node could die"
        at_kill = int(tmanager_figures(topology).get("__checkpoints-completed", "0"))
        killed_at = time.monotonic()
        slurm_cluster.kill_node(node)
        moved = wait_until(lambda: (lambda j: j if j and j["state"] == "RUNNING"
                                    and j["node"] not in ("", node) else None)(
            job_of(topology, container)), 150)
        assert moved, (topology.status(), slurm_cluster.run("sinfo", "-N", "-l").stdout)
        moved_in = time.monotonic() - killed_at
        assert wait_until(lambda: container_nodes(topology, container) - {node}, 60)
        # the whole topology rolled back and checkpoints again: the rest can go fast
        assert wait_until(lambda: (lambda f: int(f.get("__restores", "0")) >= 2 and int(
            f.get("__checkpoints-completed", "0")) > at_kill)(tmanager_figures(topology)), 90), \
            tmanager_figures(topology)
        fast.touch()
        final = wait_until(lambda: (lambda r: r if largest(r) == wanted else None)(
            committed(out)), 240)
        records = committed(out)
        assert final, {w: (c, wanted.get(w)) for w, c in largest(records).items()
                       if c != wanted.get(w)} or (len(records), tmanager_figures(topology))
        figures = tmanager_figures(topology)
        # exactly once: every update of every word, each committed once, nothing else
        assert Counter(records) == Counter((word, count) for word, total in wanted.items()
                                           for count in range(1, total + 1))
        # the moved container restored its task's state from the shared directory
        assert int(figures.get("__restores", "0")) >= 2, figures
        assert list((topology.checkpoints / NAME).glob("*/count/*.state")), \
            sorted(topology.checkpoints.rglob("*"))[:20]
        print(f"\ncount container {container} on {node}: running on {moved['node']} "
              f"{moved_in:.1f} s after the node died; counts of {len(wanted)} words exact "
              f"({sum(wanted.values())} updates committed once); figures: "
              f"{ {k: v for k, v in figures.items() if 'restore' in k or 'checkpoint' in k} }")
    finally:
        fast.touch()
        topology.kill()
        if node is not None:
            bring_back(slurm_cluster, node)
    assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()
