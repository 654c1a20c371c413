"""The steps a cluster that is not this machine adds to a submission: its state manager
(ZooKeeper, with a digest), the package and its upload.

Heron's order, with the package step a cluster needs: write the topology's state (its
keys, under the digest ACL, first), pack the project, upload the package, record where
it is in the launch spec, then hand the containers to the cluster's scheduler. A failure
at any step removes what the earlier ones wrote (state, package), so a half-submitted
topology neither blocks its name nor leaves a package behind.

The working directory on the submitting machine holds what the submitter's side needs:
the launch spec (read by the scheduler service), the keys, the digest's copy, the
package and the scheduler's log. Containers never read it: they get the package by URL
and the keys from ZooKeeper (engine/executor/remote.py). On Slurm, which keeps every
batch script, the digest reaches the jobs as a file, never inside the script: an
owner-only copy in ``UPLOADER_DIR/secrets-TOPOLOGY_ID/`` on the localfs uploader's
directory, which every node mounts (engine/scheduler/slurm/jobscript.py); a Slurm
cluster without one is refused before anything is written, and ``heron kill`` or a
failed submit deletes the copy.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from engine.common.cluster.config import ClusterConfig, ClusterConfigError, ClusterRef
from engine.common.cluster.package import (
    DEFINITION_SUFFIX,
    Package,
    build_package,
    definition_contents,
    flux_contents,
)
from engine.common.launch import LaunchSpec, StateManagerSpec, Submission
from engine.common.security.private import private_dir, write_private_file
from engine.common.submission import LoadedTopology
from engine.executor.remote import launch_manifest
from engine.scheduler.slurm.jobscript import SHARED_DIR_KEY, shared_secrets_dir
from engine.spi.statemgr import StateManager
from engine.statemgr.zookeeper import read_digest_file
from engine.submitter.deploy import deploy
from engine.uploader import uploader_for


@dataclass
class ClusterSubmission:
    spec: LaunchSpec
    package: Package
    url: str


def cluster_state_spec(cluster: ClusterConfig, working_dir: Path | None = None) -> StateManagerSpec:
    """The ZooKeeper state of a remote cluster. Its nodes read the topology's keys from
    there, so the tree must keep them from other clients: a digest is required. With
    ``working_dir`` the digest is copied there (owner-only) and the spec names the copy."""
    auth = zk_auth_file(cluster)
    path = auth
    if working_dir is not None:
        require_shared_secrets_dir(cluster)
        private_dir(working_dir)
        path = write_private_file(working_dir / "secrets" / "zk-auth",
                                  read_digest_file(auth).encode())
    return StateManagerSpec(kind="zookeeper", zk_hosts=cluster.zk_hosts, zk_root=cluster.zk_root,
                            zk_auth_file=str(path))


def zk_auth_file(cluster: ClusterConfig) -> Path:
    """The remote cluster's ZooKeeper digest file; ClusterConfigError when it names none."""
    auth = cluster.zk_auth_file
    if auth is None:
        raise ClusterConfigError(
            f"{_cluster_file(cluster, 'statemgr.yaml')}: heron.statemgr.zookeeper.auth.file "
            f"is required for the {cluster.scheduler} scheduler: its nodes read the "
            f"topology's keys from ZooKeeper, which must keep them from every other client "
            f"(an owner-only file holding user:password)")
    return auth


def _cluster_file(cluster: ClusterConfig, name: str) -> Path:
    """One of a remote cluster's configuration files, for a message naming it."""
    assert cluster.directory is not None, "only local has no directory, and it needs no files"
    return cluster.directory / name


def require_shared_secrets_dir(cluster: ClusterConfig) -> None:
    """A Slurm cluster passes the digest to its jobs through the localfs uploader's
    directory (never inside a batch script, which Slurm keeps): refuse one without it."""
    if cluster.scheduler == "slurm" and shared_secrets_dir(cluster.values, "x") is None:
        raise ClusterConfigError(
            f"{_cluster_file(cluster, 'uploader.yaml')}: {SHARED_DIR_KEY} (with "
            f"heron.class.uploader: localfs) is required for the slurm scheduler: the "
            f"ZooKeeper digest reaches each job as an owner-only file in that directory, "
            f"which every node mounts, since Slurm keeps every batch script and shows a "
            f"job's arguments and environment")


def place_shared_secret(cluster: ClusterConfig, spec: LaunchSpec) -> Path | None:
    """Slurm: the digest, owner-only, in ``UPLOADER_DIR/secrets-TOPOLOGY_ID/zk-auth``
    (0600 in a 0700 directory) where the jobs read it. Returns the directory."""
    if cluster.scheduler != "slurm" or not spec.state.zk_auth_file:
        return None
    directory = shared_secrets_dir(cluster.values, spec.topology_id)
    if directory is None:
        require_shared_secrets_dir(cluster)
        return None
    directory.parent.mkdir(parents=True, exist_ok=True)  # the uploader's, shared
    private_dir(directory)
    write_private_file(directory / "zk-auth", read_digest_file(spec.state.zk_auth_file).encode())
    return directory


def remove_shared_secret(cluster: ClusterConfig | None, topology_id: str) -> None:
    """Delete the submission's shared digest copy (``heron kill``, a failed submit)."""
    if cluster is None:
        return
    directory = shared_secrets_dir(cluster.values, topology_id)
    if directory is not None and directory.is_dir() and not directory.is_symlink():
        shutil.rmtree(directory)


def submit_to_cluster(cluster: ClusterConfig, ref: ClusterRef, loaded: LoadedTopology,
                      submission: Submission, working_dir: Path, state: StateManager,
                      state_spec: StateManagerSpec, *, deactivated: bool = False,
                      multilang: bool = False,
                      multilang_serializer: str = "json") -> ClusterSubmission:
    """Write the state, pack and upload; returns the launch spec the scheduler runs from.
    Launching is the submitter's next step (engine/submitter/submitter.py)."""
    spec = deploy(loaded, state=state, state_spec=state_spec, working_dir=working_dir,
                  submission=submission, deactivated=deactivated, multilang=multilang,
                  multilang_serializer=multilang_serializer, cluster=str(ref))
    return package_and_upload(cluster, spec, loaded, state)


def package_and_upload(cluster: ClusterConfig, spec: LaunchSpec, loaded: LoadedTopology,
                       state: StateManager) -> ClusterSubmission:
    """Pack the project, upload it and record where it is in the launch spec (with the
    cluster's scheduler and its keys); a failure removes the state written before and
    the package uploaded."""
    uploader = uploader_for(cluster)
    url = None
    try:
        place_shared_secret(cluster, spec)
        spec.scheduler = cluster.scheduler
        spec.scheduler_config = {k: v for k, v in cluster.values.items()
                                 if isinstance(v, (str, int, float, bool))}
        package = build_topology_package(loaded, spec, spec.home / "package")
        url = uploader.upload(package, f"{spec.topology_name}-{spec.topology_id}")
        spec.package_url, spec.package_sha256 = url, package.sha256
        spec.save()
    except BaseException:
        try:
            state.clean(spec.topology_name)
        finally:
            remove_shared_secret(cluster, spec.topology_id)
            if url is not None:
                uploader.delete(url)
        raise
    return ClusterSubmission(spec, package, url)


def build_topology_package(loaded: LoadedTopology, spec: LaunchSpec, out_dir: Path) -> Package:
    """The package of a loaded topology (engine/common/cluster/package.py): a streamparse
    project's folders, what a Flux file reads (its YAML, ``resources/``, includes), or a
    heronpy definition and its pex,
    with the launch spec's manifest naming the files as they lie in the package."""
    if Path(spec.submission.project).suffix == DEFINITION_SUFFIX:  # heronpy's FILE.pex -
        files = definition_contents(spec.submission.project, spec.submission.config_file)
        return build_package(loaded.project.root, launch_manifest(spec), out_dir, files=files)
    if loaded.flux is None:
        return build_package(loaded.project.root, launch_manifest(spec), out_dir)
    contents = flux_contents(loaded.flux, spec.submission.config_file)
    return build_package(loaded.project.root, launch_manifest(spec, contents), out_dir,
                         flux=contents)


def withdraw(cluster: ClusterConfig, spec: LaunchSpec, state: StateManager) -> None:
    """Undo a submission whose scheduler did not start: state and package."""
    try:
        state.clean(spec.topology_name)
    finally:
        remove_shared_secret(cluster, spec.topology_id)
        if spec.package_url:
            uploader_for(cluster).delete(spec.package_url)
