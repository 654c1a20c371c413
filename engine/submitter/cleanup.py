"""What ``heron kill`` (and a failed ``heron submit``) removes besides the state, whether
or not the topology's scheduler service answered.

* Slurm: every job of the submission, found by the comment each carries
  (engine/scheduler/slurm/cleanup.py), is cancelled directly, and the kill waits until
  Slurm lists none. Each job's script removes the node's copies of the secrets as it
  ends (engine/scheduler/slurm/jobscript.py). Then the digest's shared copy (on the
  uploader's directory, where the jobs read it) is deleted, and a cleanup job runs on
  every node, for the jobs that never ran their own cleanup (their node died); the
  nodes it could not clean are reported, and on a node that is down the cleanup job
  stays queued and runs when the node returns (so does the sweep every job of the
  topology's user starts with).
* The uploaded package, wherever the cluster's uploader put it.
* On this machine: the working directory's secrets (the digest's copy, the topology's
  keys) and the package built there. Logs stay (docs/clusters.md, "Logs").
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from engine.common.cluster.config import (
    ClusterConfig,
    ClusterConfigError,
    ClusterRef,
    load_cluster,
)
from engine.common.launch import LaunchError, LaunchSpec
from engine.messages import execution_state_pb2, topology_pb2
from engine.scheduler.slurm.cleanup import cancel_topology_jobs, clean_nodes
from engine.scheduler.slurm.commands import SlurmCommands, SlurmError
from engine.submitter.errors import SubmitterError
from engine.submitter.upload import remove_shared_secret
from engine.uploader import delete_package, uploader_for

#: what the working directory holds that must not outlive the topology
SECRET_ENTRIES = ("secrets", "package")
#: how long a kill waits for Slurm to list none of the topology's jobs
SLURM_KILL_WAIT_SECS = 60.0


def scrub_working_dir(working_dir: Path) -> None:
    """Remove the working directory's secrets and built package; logs stay."""
    for entry in SECRET_ENTRIES:
        path = Path(working_dir) / entry
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists() or path.is_symlink():
            path.unlink(missing_ok=True)


def cluster_of(home: Path, execution: execution_state_pb2.ExecutionState | None
               ) -> ClusterConfig | None:
    """The cluster a topology was submitted to (its execution state names it), or None
    for ``local`` or a cluster this machine does not describe."""
    if execution is None or not execution.cluster or execution.cluster == "local":
        return None
    try:
        return load_cluster(home, ClusterRef.parse(execution.cluster).cluster)
    except ClusterConfigError:
        return None


def clean_cluster(cluster: ClusterConfig | None, name: str, topology_id: str, working_dir: Path, *,
                  report: Callable[[str], None] | None = None) -> list[str]:
    """Cancel the submission's Slurm jobs, delete its shared digest copy and its package,
    clean every node, scrub the working dir. Returns the job ids cancelled here (the
    service may have cancelled them already); each node not cleaned is one line to
    ``report``. Raises :class:`SubmitterError` naming what could not be removed, after
    removing the rest."""
    problems: list[str] = []
    cancelled: list[str] = []
    if cluster is not None and cluster.scheduler == "slurm":
        values = cluster.values
        commands = SlurmCommands(conf=values.get("heron.slurm.conf"),
                                 timeout=float(values.get("heron.slurm.submit.timeout.secs", 30)))
        try:
            cancelled = cancel_topology_jobs(commands, topology_id,
                                             wait_secs=SLURM_KILL_WAIT_SECS)
        except SlurmError as exc:
            problems.append(f"cannot cancel its Slurm jobs: {exc}")
        try:
            remove_shared_secret(cluster, topology_id)
        except OSError as exc:
            problems.append(f"cannot delete its digest's shared copy: {exc}")
        try:
            not_cleaned = clean_nodes(commands, values, topology_id)
        except SlurmError as exc:
            problems.append(f"cannot run its cleanup jobs on the nodes: {exc}")
        else:
            for node, why in sorted(not_cleaned.items()):
                if report is not None:
                    report(f"node {node} not cleaned of {name!r} yet: {why}")
    try:
        _delete_package(cluster, name, topology_id, working_dir)
    except Exception as exc:  # noqa: BLE001 - named in the one-line error below
        problems.append(f"cannot delete its package: {exc}")
    scrub_working_dir(working_dir)
    if problems:
        raise SubmitterError(f"killed {name!r} but {'; '.join(problems)}")
    return cancelled


def _delete_package(cluster: ClusterConfig | None, name: str, topology_id: str,
                    working_dir: Path) -> None:
    try:
        spec = LaunchSpec.load(working_dir)
    except LaunchError:
        spec = None
    if spec is not None and spec.topology_id == topology_id and spec.package_url:
        delete_package(spec)
    elif cluster is not None and not cluster.is_local:
        # submitted from another machine: the uploader names the package the same way
        uploader = uploader_for(cluster)
        uploader.delete(uploader.url_for(f"{name}-{topology_id}"))


def checkpoint_dir(topology: topology_pb2.Topology, working_dir: Path) -> Path | None:
    """Where an EFFECTIVELY_ONCE topology's checkpoints are (its storage root, or the
    default beside its working files), or None for a topology that takes none."""
    # deferred: only a kill needs the stateful keys
    from engine.common.plan.topology_config import topology_config
    from engine.config.checkpointing import checkpointing
    from engine.config.errors import ConfigError
    from engine.statefulstorage import default_root
    from engine.submitter.stateful_guard import effectively_once

    if not effectively_once(topology):
        return None
    try:
        settings = checkpointing(topology_config(topology))
    except ConfigError:
        return None
    name = topology.name
    return (Path(settings.root).expanduser() / name if settings.root
            else default_root(working_dir, name))


def remove_checkpoints(path: Path) -> int:
    """Delete a killed topology's checkpoints (its savepoints, kept elsewhere, stay);
    the bytes removed."""
    size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    shutil.rmtree(path)
    return size
