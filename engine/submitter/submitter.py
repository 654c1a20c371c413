"""The one submit path every cluster goes through (Heron's ``SubmitterMain`` and
``LaunchRunner``), ``local`` included.

1. open the cluster's state manager (``local``: the one the command line names; any
   other cluster: its ZooKeeper, with the digest copied owner-only into the working
   directory) and refuse a name that is already running;
2. write the topology, its packing plan and its execution state (engine/submitter/
   deploy.py), and its launch file and keys into the working directory; an
   effectively-once topology first gets the cluster's checkpoint directory, or is
   refused without one (engine/submitter/checkpoints.py);
3. a cluster that is not this machine: pack the project and upload it (engine/submitter/
   upload.py);
4. hand it to the cluster's launcher (engine/submitter/launcher.py): the scheduler
   service for ``local`` and ``slurm``, the Kubernetes scheduler in this process.

A failure at any step removes what the earlier ones wrote (state, package), so a
half-submitted topology neither blocks its name nor leaves a package behind.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from engine.cluster.config import ClusterConfig, ClusterRef
from engine.cluster.package import build_package
from engine.executor.remote import launch_manifest
from engine.launch import LAUNCH_FILE, LaunchSpec, StateManagerSpec, Submission
from engine.packing import PackingError, pack
from engine.process import read_pid_file
from engine.scheduler.kubernetes import KubernetesScheduler, KubernetesSchedulerError
from engine.scheduler.registry import runs_as_service
from engine.security.keys import TopologyKeys, keys_belong_in, plaintext_requested
from engine.statemgr import StateError
from engine.statemgr.zookeeper import read_digest_file
from engine.submitter.checkpoints import with_cluster_storage
from engine.submitter.cleanup import scrub_working_dir
from engine.submitter.deploy import TopologyExistsError, deploy
from engine.submitter.errors import SubmitterError, refused
from engine.submitter.launcher import (KubernetesLauncher, SchedulerStartError, ServiceLauncher,
                                       kubernetes_config)
from engine.submitter.upload import cluster_state_spec, package_and_upload, withdraw
from engine.uploader import uploader_for


@dataclass
class Submitted:
    spec: LaunchSpec
    #: the stored packing plan (a PackingPlan message)
    packing: Any
    #: False when the state manager cannot keep the topology's keys (see NO_KEYS_IN_STATE)
    keys_shared: bool


@dataclass
class LocalState:
    """Where ``local`` keeps its state: opened by ``open()``; ``spec_for(working_dir)``
    is the spec its processes get (a digest, if any, copied into the working dir)."""

    open: Callable[[], Any]
    spec_for: Callable[[Path], StateManagerSpec]


class Submitter:
    """Submit topologies to ``cluster`` (``ref`` as the user wrote it); working
    directories are ``working_dir(name)``; ``local``: the state manager."""

    def __init__(self, cluster: ClusterConfig, ref: ClusterRef,
                 working_dir: Callable[[str], Path], local: LocalState | None = None,
                 home: Path | None = None) -> None:
        self.cluster = cluster
        self.ref = ref
        self.working_dir = working_dir
        self.local = local
        #: the user's heron home: savepoints go under it when nothing else says where
        self.home = home
        if cluster.is_local and local is None:
            raise ValueError("a local submission needs its state manager (local=)")

    # -- the path --------------------------------------------------------------------------
    def submit(self, loaded: Any, submission: Submission, *, deactivated: bool = False,
               multilang: bool = False, multilang_serializer: str = "json") -> Submitted:
        # first, before anything is written: it may refuse (no shared checkpoint root)
        loaded, submission = with_cluster_storage(self.cluster, loaded, submission, self.home)
        name = loaded.plan.name
        working_dir = self.working_dir(name)
        fresh = not (working_dir / LAUNCH_FILE).exists()
        try:
            state_spec = None if self.cluster.is_local else cluster_state_spec(self.cluster,
                                                                               working_dir)
            state = self._open_state(state_spec)
        except BaseException:
            if fresh and not self.cluster.is_local:
                scrub_working_dir(working_dir)  # the digest's copy it just wrote
            raise
        try:
            self._refuse_running(state, name)
            try:
                return self._submit(loaded, submission, state, state_spec, working_dir,
                                    deactivated=deactivated, multilang=multilang,
                                    multilang_serializer=multilang_serializer)
            except BaseException:
                if not self.cluster.is_local:
                    scrub_working_dir(working_dir)  # keys, digest, package; logs stay
                raise
        finally:
            state.close()

    def _submit(self, loaded: Any, submission: Submission, state: Any,
                state_spec: StateManagerSpec | None, working_dir: Path, *, deactivated: bool,
                multilang: bool, multilang_serializer: str) -> Submitted:
        """Steps 2-4 for a name that is free; a failure undoes what they wrote."""
        name = loaded.plan.name
        if state_spec is None:
            assert self.local is not None
            prepare_working_dir(working_dir, name)
            state_spec = self.local.spec_for(working_dir)
        try:
            spec = deploy(loaded, state=state, state_spec=state_spec,
                          working_dir=working_dir, submission=submission,
                          deactivated=deactivated, multilang=multilang,
                          multilang_serializer=multilang_serializer,
                          **({} if self.cluster.is_local else {"cluster": str(self.ref)}))
        except (TopologyExistsError, PackingError) as exc:
            raise refused(str(exc)) from None
        if not self.cluster.is_local:
            package_and_upload(self.cluster, spec, loaded, state)
        self._launch(spec, state)
        return Submitted(spec, state.get("packingplans", name), keys_belong_in(state))

    def _open_state(self, state_spec: StateManagerSpec | None) -> Any:
        if state_spec is None:
            assert self.local is not None
            return self.local.open()
        try:
            return state_spec.open()
        except StateError as exc:
            raise SubmitterError(f"state manager ({state_spec.describe()}): {exc}") from None

    def _refuse_running(self, state: Any, name: str) -> None:
        if state.get("topologies", name) is None:
            return
        if self.cluster.is_local:
            raise refused(f"topology {name!r} is already running; heron kill {name} first")
        raise refused(f"topology {name!r} is already running on {self.cluster.name}; "
                      f"heron kill {name} --cluster {self.cluster.name} first")

    def _launch(self, spec: LaunchSpec, state: Any) -> None:
        """Hand the topology to the cluster's launcher; undo the submission if it fails."""
        name = spec.topology_name
        try:
            launcher = (ServiceLauncher() if runs_as_service(self.cluster.scheduler)
                        else KubernetesLauncher(self.cluster))
            launcher.launch(spec, state)
        except SchedulerStartError as exc:
            self._withdraw(spec, state)
            raise SubmitterError(f"{name}: {exc}", 2 if exc.returncode == 2 else 1) from None
        except KubernetesSchedulerError as exc:
            self._withdraw(spec, state)
            raise SubmitterError(f"{name}: {exc}") from None

    def _withdraw(self, spec: LaunchSpec, state: Any) -> None:
        if self.cluster.is_local:
            state.clean(spec.topology_name)
        else:
            withdraw(self.cluster, spec, state)

    # -- Kubernetes --dry-run ------------------------------------------------------------
    def dry_run(self, loaded: Any, submission: Submission) -> str:
        """The manifests a Kubernetes submission would create, secrets redacted; nothing
        is written or uploaded (the package is built aside to know its hash)."""
        name = loaded.plan.name
        if self.cluster.zk_auth_file is None:
            cluster_state_spec(self.cluster)  # the error naming the missing digest file
        digest = read_digest_file(self.cluster.zk_auth_file).encode()
        topology_id = f"{name}-{uuid.uuid4().hex[:12]}"
        spec = LaunchSpec(topology_name=name, topology_id=topology_id,
                          working_dir=tempfile.mkdtemp(prefix="heron-dry-run-"),
                          submission=submission, state=StateManagerSpec(kind="zookeeper"),
                          cluster=str(self.ref), scheduler="kubernetes")
        try:
            package = build_package(loaded.project.root, launch_manifest(spec),
                                    spec.home / "package")
            url = uploader_for(self.cluster).url_for(f"{name}-{topology_id}")
            keys = TopologyKeys.generate(name, topology_id,
                                         plaintext=plaintext_requested(dict(loaded.plan.config)))
            scheduler = KubernetesScheduler(kubernetes_config(self.cluster, name, package_url=url,
                                                              package_sha256=package.sha256))
            return scheduler.dry_run(name, topology_id, pack(loaded.plan),
                                     keys.to_proto().SerializeToString(), digest)
        finally:
            shutil.rmtree(spec.home, ignore_errors=True)


def prepare_working_dir(working_dir: Path, name: str) -> None:
    """A fresh working dir; a previous run's is removed unless its processes still live."""
    if not working_dir.exists():
        return
    alive = [p.pid for p in map(read_pid_file, sorted((working_dir / "pids").glob("*.pid"))) if p]
    if alive:
        raise SubmitterError(f"processes of an earlier run of {name!r} are still alive (pids "
                             f"{', '.join(map(str, alive))}); heron kill {name} first")
    shutil.rmtree(working_dir)
