"""``heron submit CLUSTER[/ROLE[/ENV]] PROJECT`` for a cluster other than this machine.

The cluster is described in ``HOME/conf/CLUSTER/`` (engine/cluster/config.py). Slurm runs
its scheduler as a service on this machine (as ``local`` does), which submits one job
per container and keeps them running; ``heron kill|restart|update`` talk to that
service. What follows the same steps everywhere (state, package, upload) is
engine/cluster/submit.py.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import click

from engine.cli.display import planned_components
from engine.cli.env import BadInput, CommandError, Env


@contextlib.contextmanager
def cluster_submission(config: Any, ref: Any, loaded: Any, submission: Any, env: Env, *,
                       deactivated: bool, multilang: bool,
                       multilang_serializer: str) -> Iterator[tuple[Any, Any]]:
    """The cluster's state, open, with the topology written, packed and uploaded
    (engine/cluster/submit.py): ``(state, submission)``; the state is closed after."""
    from engine.cluster.submit import cluster_state_spec, submit_to_cluster
    from engine.deploy import TopologyExistsError
    from engine.packing import PackingError
    from engine.statemgr import StateError

    name = loaded.plan.name
    working_dir = env.working_dir(name)
    state_spec = cluster_state_spec(config, working_dir)
    try:
        state = state_spec.open()
    except StateError as exc:
        raise CommandError(f"state manager ({state_spec.describe()}): {exc}") from None
    try:
        if state.get("topologies", name) is not None:
            raise BadInput(f"topology {name!r} is already running on {config.name}; "
                           f"heron kill {name} --cluster {config.name} first")
        try:
            submitted = submit_to_cluster(config, ref, loaded, submission, working_dir, state,
                                          state_spec, deactivated=deactivated,
                                          multilang=multilang,
                                          multilang_serializer=multilang_serializer)
        except (TopologyExistsError, PackingError) as exc:
            raise BadInput(str(exc)) from None
        yield state, submitted
    finally:
        state.close()


def submit_to_remote_cluster(config: Any, ref: Any, loaded: Any, submission: Any, env: Env, *,
                             deactivated: bool, multilang: bool,
                             multilang_serializer: str) -> None:
    from engine.cluster.submit import withdraw
    from engine.scheduler import SchedulerStartError, start_detached, wait_until_serving

    name = loaded.plan.name
    with cluster_submission(config, ref, loaded, submission, env, deactivated=deactivated,
                            multilang=multilang,
                            multilang_serializer=multilang_serializer) as (state, submitted):
        spec = submitted.spec
        proc = start_detached(spec)
        try:
            wait_until_serving(spec, proc, state)
        except SchedulerStartError as exc:
            withdraw(config, spec, state)
            error = BadInput if exc.returncode == 2 else CommandError
            raise error(f"{name}: {exc}") from None
        packing = state.get("packingplans", name)
    containers = len(packing.container_plans)
    click.echo(f"submitted topology {name!r} ({spec.topology_id}) to {ref}: {containers} "
               f"container{'s' if containers != 1 else ''} + Topology Master as "
               f"{config.scheduler} jobs{', deactivated' if deactivated else ''}")
    click.echo("  components:")
    for line in planned_components(loaded.plan):
        click.echo(f"    {line}")
    click.echo(f"  package:     {spec.package_url} (sha256 {spec.package_sha256[:12]}…)")
    click.echo(f"  scheduler:   {spec.process_log('scheduler')}")
    click.echo(f"  state:       {spec.state.describe()}")
    click.echo(f"  control it:  heron list|kill|restart|update ... --cluster {config.name}")


# -- Kubernetes: the scheduler runs in the CLI (library mode), as Heron's does ------------
def kubernetes_config(cluster: Any, name: str, *, package_url: str, package_sha256: str) -> dict:
    """What engine.scheduler.kubernetes needs: the cluster's keys, where the package is,
    where ZooKeeper is, and the topology's name (for update/restart/kill later)."""
    return {**cluster.values, "heron.package.url": package_url,
            "heron.package.sha256": package_sha256,
            "heron.statemgr.connection.string": cluster.zk_hosts,
            "heron.statemgr.root.path": cluster.zk_root, "heron.topology.name": name}


def submit_to_kubernetes(config: Any, ref: Any, loaded: Any, submission: Any, env: Env, *,
                         deactivated: bool, multilang: bool, multilang_serializer: str,
                         dry_run: bool) -> None:
    import tempfile
    import shutil
    import uuid

    from engine.cluster.package import build_package
    from engine.cluster.submit import cluster_state_spec, withdraw
    from engine.cluster.uploader import uploader_for
    from engine.deploy import pack
    from engine.executor.remote import launch_manifest
    from engine.launch import LaunchSpec, StateManagerSpec
    from engine.packing import PackingPlan
    from engine.scheduler.kubernetes import (KubernetesScheduler, KubernetesSchedulerError,
                                             kubernetes_name)
    from engine.security.keys import TopologyKeys, plaintext_requested
    from engine.statemgr.zookeeper import read_digest_file

    name = loaded.plan.name
    if config.zk_auth_file is None:
        cluster_state_spec(config)  # the error naming the missing digest file
    digest = read_digest_file(config.zk_auth_file).encode()
    if dry_run:
        # nothing written, nothing uploaded: the package is built aside to know its hash
        topology_id = f"{name}-{uuid.uuid4().hex[:12]}"
        spec = LaunchSpec(topology_name=name, topology_id=topology_id,
                          working_dir=tempfile.mkdtemp(prefix="heron-dry-run-"),
                          submission=submission, state=StateManagerSpec(kind="zookeeper"),
                          cluster=str(ref), scheduler="kubernetes")
        package = build_package(loaded.project.root, launch_manifest(spec),
                                spec.home / "package")
        url = uploader_for(config).url_for(f"{name}-{topology_id}")
        keys = TopologyKeys.generate(name, topology_id,
                                     plaintext=plaintext_requested(dict(loaded.plan.config)))
        scheduler = KubernetesScheduler(kubernetes_config(config, name, package_url=url,
                                                          package_sha256=package.sha256))
        click.echo(scheduler.dry_run(name, topology_id, pack(loaded.plan),
                                     keys.to_proto().SerializeToString(), digest), nl=False)
        shutil.rmtree(spec.home, ignore_errors=True)
        return
    with cluster_submission(config, ref, loaded, submission, env, deactivated=deactivated,
                            multilang=multilang,
                            multilang_serializer=multilang_serializer) as (state, submitted):
        spec = submitted.spec
        keys = TopologyKeys.load(spec.home, topology_id=spec.topology_id)
        scheduler = KubernetesScheduler(kubernetes_config(
            config, name, package_url=spec.package_url, package_sha256=spec.package_sha256))
        packing = PackingPlan.from_proto(state.get("packingplans", name))
        try:
            scheduler.launch(name, spec.topology_id, packing,
                             keys.to_proto().SerializeToString(), digest)
        except KubernetesSchedulerError as exc:
            withdraw(config, spec, state)
            raise CommandError(f"{name}: {exc}") from None
    k8s = kubernetes_name(name)
    click.echo(f"submitted topology {name!r} ({spec.topology_id}) to {ref}: StatefulSets "
               f"{k8s}-tmanager (1 pod) and {k8s}-executors ({len(packing.containers)} pods) "
               f"in namespace {config.get('heron.kubernetes.namespace', 'default')}")
    click.echo(f"  package: {spec.package_url} (sha256 {spec.package_sha256[:12]}…)")
    click.echo(f"  control it: heron kill|restart|update ... --cluster {config.name}")


def kubernetes_scheduler_of(env: Env, state: Any, name: str) -> Any | None:
    """The Kubernetes scheduler a topology was submitted with (its execution state names
    the cluster), for kill/restart/update from the CLI; None for any other scheduler."""
    from engine.cluster.config import ClusterConfigError, ClusterRef, load_cluster

    execution = state.get("executionstate", name)
    if execution is None or not execution.cluster or execution.cluster == "local":
        return None
    try:
        config = load_cluster(env.home, ClusterRef.parse(execution.cluster).cluster)
    except ClusterConfigError:
        return None
    if config.scheduler != "kubernetes":
        return None
    from engine.scheduler.kubernetes import KubernetesScheduler

    return KubernetesScheduler({**config.values, "heron.topology.name": name})


def kill_on_kubernetes(env: Env, state: Any, name: str) -> bool:
    """Kill a topology submitted to Kubernetes (delete its objects, its state and its
    package); False when it was not."""
    from engine.cluster.uploader import delete_package
    from engine.launch import LaunchError, LaunchSpec

    scheduler = kubernetes_scheduler_of(env, state, name)
    if scheduler is None:
        return False
    scheduler.kill()
    state.clean(name)
    try:
        delete_package(LaunchSpec.load(env.working_dir(name)))
    except LaunchError:
        pass  # submitted from another machine: its package stays where it was uploaded
    return True
