"""The one submit path every cluster goes through (Heron's ``SubmitterMain`` and
``LaunchRunner``), ``local`` included.

0. give the topology the cluster's defaults (``defaults.yaml``) for the keys it does not
   set itself: :func:`with_cluster_defaults`;
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

import dataclasses
import shutil
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.common.cluster.config import ClusterConfig, ClusterRef
from engine.common.launch import LAUNCH_FILE, LaunchSpec, StateManagerSpec, Submission
from engine.common.plan.discovery import load_topology_class
from engine.common.process import read_pid_file
from engine.common.security.keys import TopologyKeys, keys_belong_in, plaintext_requested
from engine.common.submission import LoadedTopology
from engine.messages import packing_plan_pb2
from engine.packing import PackingError, pack
from engine.scheduler.kubernetes import KubernetesScheduler, KubernetesSchedulerError
from engine.scheduler.registry import runs_as_service
from engine.spi.statemgr import StateManager
from engine.statemgr import StateError
from engine.statemgr.zookeeper import read_digest_file
from engine.submitter.checkpoints import with_cluster_storage
from engine.submitter.cleanup import scrub_working_dir
from engine.submitter.deploy import TopologyExistsError, deploy
from engine.submitter.errors import SubmitterError, refused
from engine.submitter.launcher import (
    KubernetesLauncher,
    SchedulerStartError,
    ServiceLauncher,
    kubernetes_config,
)
from engine.submitter.upload import (
    build_topology_package,
    cluster_state_spec,
    package_and_upload,
    withdraw,
    zk_auth_file,
)
from engine.uploader import uploader_for


@dataclass
class Submitted:
    spec: LaunchSpec
    #: the stored packing plan (a PackingPlan message)
    packing: packing_plan_pb2.PackingPlan | None
    #: False when the state manager cannot keep the topology's keys (see NO_KEYS_IN_STATE)
    keys_shared: bool


@dataclass
class LocalState:
    """Where ``local`` keeps its state: opened by ``open()``; ``spec_for(working_dir)``
    is the spec its processes get (a digest, if any, copied into the working dir)."""

    open: Callable[[], StateManager]
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
    def submit(self, loaded: LoadedTopology, submission: Submission, *, deactivated: bool = False,
               multilang: bool = False, multilang_serializer: str = "json") -> Submitted:
        # first, before anything is written: the cluster's defaults (they may make the
        # topology effectively-once), then its storage (it may refuse: no shared root)
        loaded, submission = with_cluster_defaults(self.cluster, loaded, submission)
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

    def _submit(self, loaded: LoadedTopology, submission: Submission, state: StateManager,
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
                          cluster="local" if self.cluster.is_local else str(self.ref))
        except (TopologyExistsError, PackingError) as exc:
            raise refused(str(exc)) from None
        if not self.cluster.is_local:
            package_and_upload(self.cluster, spec, loaded, state)
        self._launch(spec, state)
        return Submitted(spec, state.get("packingplans", name), keys_belong_in(state))

    def _open_state(self, state_spec: StateManagerSpec | None) -> StateManager:
        if state_spec is None:
            assert self.local is not None
            return self.local.open()
        try:
            return state_spec.open()
        except StateError as exc:
            raise SubmitterError(f"state manager ({state_spec.describe()}): {exc}") from None

    def _refuse_running(self, state: StateManager, name: str) -> None:
        if state.get("topologies", name) is None:
            return
        if self.cluster.is_local:
            raise refused(f"topology {name!r} is already running; heron kill {name} first")
        raise refused(f"topology {name!r} is already running on {self.cluster.name}; "
                      f"heron kill {name} --cluster {self.cluster.name} first")

    def _launch(self, spec: LaunchSpec, state: StateManager) -> None:
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

    def _withdraw(self, spec: LaunchSpec, state: StateManager) -> None:
        if self.cluster.is_local:
            state.clean(spec.topology_name)
        else:
            withdraw(self.cluster, spec, state)

    # -- Kubernetes --dry-run ------------------------------------------------------------
    def dry_run(self, loaded: LoadedTopology, submission: Submission) -> str:
        """The manifests a Kubernetes submission would create, secrets redacted; nothing
        is written or uploaded (the package is built aside to know its hash)."""
        loaded, submission = with_cluster_defaults(self.cluster, loaded, submission)
        name = loaded.plan.name
        digest = read_digest_file(zk_auth_file(self.cluster)).encode()
        topology_id = f"{name}-{uuid.uuid4().hex[:12]}"
        spec = LaunchSpec(topology_name=name, topology_id=topology_id,
                          working_dir=tempfile.mkdtemp(prefix="heron-dry-run-"),
                          submission=submission, state=StateManagerSpec(kind="zookeeper"),
                          cluster=str(self.ref), scheduler="kubernetes")
        try:
            package = build_topology_package(loaded, spec, spec.home / "package")
            url = uploader_for(self.cluster).url_for(f"{name}-{topology_id}")
            keys = TopologyKeys.generate(name, topology_id,
                                         plaintext=plaintext_requested(dict(loaded.plan.config)))
            scheduler = KubernetesScheduler(kubernetes_config(self.cluster, name, package_url=url,
                                                              package_sha256=package.sha256))
            return scheduler.dry_run(name, topology_id, pack(loaded.plan),
                                     keys.to_proto().SerializeToString(), digest)
        finally:
            shutil.rmtree(spec.home, ignore_errors=True)


def keys_set(loaded: LoadedTopology, submission: Submission) -> set[str]:
    """The config keys the topology sets itself, anywhere above the cluster's defaults:
    its project's config.json env options (log settings included), its ``Topology.config``,
    the command line's ``-o`` and the flags that set keys (``-a``, ``-w``, ``--debug``).
    The engine's own fallbacks (one worker, one acker) are not settings: a cluster default
    replaces them."""
    settings = loaded.env_settings or {}
    keys = set(settings.get("options") or {})
    keys |= {f"pystorm.log.{k}" for k in (settings.get("log") or {})}
    keys |= {f"pystorm.log.{k[4:]}" for k in ("log_path", "log_file") if k in settings}
    flux = getattr(loaded, "flux", None)
    if flux is not None:
        keys |= set(flux.config)  # a Flux file's own config section
    else:
        keys |= set(getattr(load_topology_class(loaded.topology_file), "config", None) or {})
    keys |= set(submission.options)
    if submission.ackers is not None:
        keys.add("topology.acker.executors")
    if submission.workers is not None:
        keys.add("topology.workers")
    if submission.debug:
        keys |= {"topology.debug", "pystorm.log.level"}
    return keys


def cluster_default_options(cluster: ClusterConfig, loaded: LoadedTopology,
                            submission: Submission) -> dict[str, Any]:
    """The cluster's defaults (engine/common/cluster/config.py, ``defaults.yaml``) for the keys
    this topology does not set itself."""
    if not cluster.topology_defaults:
        return {}
    own = keys_set(loaded, submission)
    return {k: v for k, v in cluster.topology_defaults.items() if k not in own}


def with_cluster_defaults(cluster: ClusterConfig, loaded: LoadedTopology,
                          submission: Submission) -> tuple[LoadedTopology, Submission]:
    """``(loaded, submission)`` with the cluster's defaults for the keys the topology does
    not set: the lowest precedence (cluster defaults < config.json env options <
    Topology.config < ``-o``). They are added to the submission's options, which every
    process compiles the topology from, only where nothing above them set the key, so a
    higher level always wins; the topology is compiled again as the nodes will compile
    it. Unchanged when the cluster has none to add."""
    added = cluster_default_options(cluster, loaded, submission)
    if not added:
        return loaded, submission
    submission = dataclasses.replace(submission, options={**added, **submission.options})
    again = submission.load()
    # the notes about -o keys a component overrides are about what the user typed
    return dataclasses.replace(again, notes=list(loaded.notes)), submission


def prepare_working_dir(working_dir: Path, name: str) -> None:
    """A fresh working dir; a previous run's is removed unless its processes still live."""
    if not working_dir.exists():
        return
    alive = [p.pid for p in map(read_pid_file, sorted((working_dir / "pids").glob("*.pid"))) if p]
    if alive:
        raise SubmitterError(f"processes of an earlier run of {name!r} are still alive (pids "
                             f"{', '.join(map(str, alive))}); heron kill {name} first")
    shutil.rmtree(working_dir)
