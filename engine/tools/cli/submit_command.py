"""``heron submit CLUSTER[/ROLE[/ENV]] PROJECT``: one path for every cluster
(engine/submitter), ``local`` included; this module reads the options and prints.

``local`` is this machine; any other cluster is described in ``HOME/conf/CLUSTER/``
(engine/common/cluster/config.py). Local and Slurm run their scheduler as a service on this
machine, which ``heron kill|restart|update`` talk to; Kubernetes' runs in the CLI, as
Heron's does.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from engine.tools.cli.display import planned_components
from engine.tools.cli.env import BadInput, Env, common_options
from engine.tools.cli.topology_args import TopologyArgsCommand, main_form

if TYPE_CHECKING:  # types only: deferred at run time for the CLI's start-up time
    from engine.common.cluster.config import ClusterConfig, ClusterRef
    from engine.common.plan.logical import LogicalPlan
    from engine.common.submission import LoadedTopology


@click.command("submit", cls=TopologyArgsCommand, file_index=1)
@click.argument("cluster", metavar="CLUSTER[/ROLE[/ENV]]")
@click.argument("project", type=click.Path(path_type=Path))
@click.option("-n", "--name", help="Topology to submit: the stem of a file in topologies/.")
@click.option("-e", "--environment", "env_name", help="Environment of config.json (envs.NAME).")
@click.option("-o", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Topology option (YAML value), highest precedence. Repeatable.")
@click.option("-a", "--ackers", type=int, help="Sets topology.acker.executors.")
@click.option("-w", "--workers", type=int, help="Sets topology.workers (containers).")
@click.option("--config", "config_file", type=click.Path(path_type=Path),
              help="Config file to use instead of the project's config.json / heron.yaml.")
@click.option("--multilang", is_flag=True,
              help="Run Python components as subprocesses over Storm's multi-lang protocol.")
@click.option("--filter", "filter_file", type=click.Path(path_type=Path),
              help="Flux file: Java properties file whose values replace ${key} placeholders.")
@click.option("--env-filter", is_flag=True,
              help="Flux file: replace ${ENV-NAME} placeholders with environment variables.")
@click.option("--deploy-deactivated", is_flag=True,
              help="Start the topology deactivated (PAUSED); `heron activate` starts it.")
@click.option("--dry-run", is_flag=True,
              help="Kubernetes: print the manifests (secrets redacted); nothing is submitted.")
@click.option("--from-savepoint", "from_savepoint", metavar="ID",
              help="Start from a savepoint (its id, or its path): state of components "
                   "matched by name, at any parallelism (EFFECTIVELY_ONCE).")
@click.option("--allow-missing-state", is_flag=True,
              help="With --from-savepoint: start stateful components the savepoint does not "
                   "have empty, and drop its state of components the topology lacks.")
@common_options
def submit_command(cluster: str, project: Path, name: str | None, env_name: str | None,
                   options: tuple[str, ...], ackers: int | None, workers: int | None,
                   config_file: Path | None, multilang: bool, filter_file: Path | None,
                   env_filter: bool, deploy_deactivated: bool, dry_run: bool,
                   from_savepoint: str | None, allow_missing_state: bool, env: Env) -> None:
    """Submit PROJECT (a streamparse project, a topology file, or a Storm Flux
    TOPOLOGY.yaml with --filter/--env-filter) to CLUSTER.

    `local` is this machine; any other cluster is described in HOME/conf/CLUSTER/
    (scheduler.yaml, statemgr.yaml, uploader.yaml; docs/clusters.md). The topology runs
    in the background under a scheduler service until `heron kill`.

    As Heron's CLI: a heronpy FILE.pex|FILE.py followed by `- [ARGS]` runs the file's main
    with HERON_OPTIONS set (its build_and_submit() writes the topology), or by
    `module.ClassName [NAME]` writes that Topology subclass; the topology's name is the
    definition's (docs/heronpy.md, Submitting). A cluster's nodes get the definition and
    the pex in the topology's package; a lone .py is submitted to local only.
    """
    form = main_form()
    submit = functools.partial(
        _submit, cluster=cluster, name=name, env_name=env_name, options=options,
        ackers=ackers, workers=workers, config_file=config_file, multilang=multilang,
        filter_file=filter_file, env_filter=env_filter,
        deploy_deactivated=deploy_deactivated, dry_run=dry_run,
        from_savepoint=from_savepoint, allow_missing_state=allow_missing_state, env=env)
    if project.suffix in (".py", ".pex") and not project.exists():
        raise BadInput(f"{project}: no such topology file")
    if form is None and project.suffix != ".pex":
        submit(project=project)
        return
    import shutil  # deferred: CLI start-up time

    from engine.common.cluster.config import ClusterRef, load_cluster
    from engine.tools.cli.heronpy_files import write_definition

    if project.suffix == ".py" and not load_cluster(env.home,
                                                    ClusterRef.parse(cluster).cluster).is_local:
        raise BadInput(f"{project}: a lone .py finds its imports in directories of this "
                       f"machine, which the nodes of cluster {cluster!r} do not have; submit "
                       "it as a pex (python -m zipapp DIR -m module:main -o FILE.pex), or "
                       "to local")
    # kept for as long as the topology runs: its processes rebuild it from here
    definition = write_definition(project, form, env.home / "definitions",
                                  deactivated=deploy_deactivated)
    launched: list[bool] = []
    try:
        submit(project=definition, launched=launched)
    finally:
        # kept only when a topology runs from it: a failure after launching (a closed
        # stdout while reporting) keeps it, a refused or withdrawn submit or a dry run not
        if not launched or dry_run:
            shutil.rmtree(definition.parent, ignore_errors=True)


def _submit(cluster: str, project: Path, name: str | None, env_name: str | None,
            options: tuple[str, ...], ackers: int | None, workers: int | None,
            config_file: Path | None, multilang: bool, filter_file: Path | None,
            env_filter: bool, deploy_deactivated: bool, dry_run: bool,
            from_savepoint: str | None, allow_missing_state: bool, env: Env,
            launched: list[bool] | None = None) -> None:
    """Submit the topology of ``project`` (a project, a topology or Flux file, or a
    heronpy definition): what ``heron submit`` does once the file is known;
    ``launched`` gets True once the topology is submitted (before it is reported)."""
    # deferred: CLI start-up time (every command module loads for `heron --help`)
    from compat.storm_api.project import parse_cli_options
    from engine.common.cluster.config import ClusterRef, load_cluster
    from engine.common.launch import Submission
    from engine.common.security.private import runtime_root
    from engine.common.submission import load_topology
    from engine.submitter.submitter import LocalState, Submitter

    ref = ClusterRef.parse(cluster)
    cluster_config = load_cluster(env.home, ref.cluster)
    if cluster_config.is_local:
        runtime_root()  # the ipc sockets' root: refused (exit 2, naming it) before anything starts
    cli_options = parse_cli_options(options)
    load = functools.partial(load_topology, project, name=name, env=env_name,
                             config_file=config_file, ackers=ackers, workers=workers,
                             filter_file=filter_file, env_filter=env_filter)
    loaded = load(cli_options=cli_options)
    if from_savepoint:
        cli_options = {**cli_options, **_from_savepoint(loaded, cluster_config, env,
                                                        from_savepoint, allow_missing_state)}
        loaded = load(cli_options=cli_options)
    elif allow_missing_state:
        raise BadInput("--allow-missing-state goes with --from-savepoint")
    for note in loaded.notes:
        click.echo(note, err=True)
    plan = loaded.plan
    check_health_config(dict(plan.config))
    if cluster_config.is_local and not dry_run:
        from engine.common.plan.preflight import preflight

        preflight(loaded.compiled)  # e.g. a Kafka broker that does not answer: exit 2
    if dry_run and cluster_config.scheduler != "kubernetes":
        raise BadInput("--dry-run prints a Kubernetes cluster's manifests; "
                       f"{ref.cluster!r} uses the {cluster_config.scheduler} scheduler")
    submission = Submission.of(project, plan.name, env=loaded.env, config_file=config_file,
                               options=cli_options, ackers=ackers, workers=workers,
                               flux=loaded.flux)
    submitter = Submitter(cluster_config, ref, env.working_dir,
                          LocalState(env.open_state, env.launch_state_spec), home=env.home)
    if dry_run:
        click.echo(submitter.dry_run(loaded, submission), nl=False)
        return
    submitted = submitter.submit(
        loaded, submission, deactivated=deploy_deactivated, multilang=multilang,
        multilang_serializer=str(loaded.project.config.get("serializer") or "json"))
    if launched is not None:
        launched.append(True)
    if cluster_config.is_local:
        _report_local(submitted, plan, deploy_deactivated, env)
    elif cluster_config.scheduler == "kubernetes":
        _report_kubernetes(submitted, ref, cluster_config)
    else:
        _report_service(submitted, plan, ref, cluster_config, deploy_deactivated)


def _from_savepoint(loaded: LoadedTopology, cluster: ClusterConfig, env: Env, savepoint: str,
                    allow_missing: bool) -> dict[str, str]:
    """The option naming the savepoint to start from, once it is found and fits the
    topology (its stateful components matched by name); a one-line error otherwise."""
    # deferred: CLI start-up time
    from compat.storm_api.state import StatefulComponent
    from engine.config.keys import FROM_SAVEPOINT_KEY, with_defaults
    from engine.config.reliability import reliability
    from engine.statefulstorage.savepoints import (
        SavepointError,
        check_components,
        find_savepoint,
        read_savepoint,
    )
    from engine.submitter.checkpoints import savepoints_dir

    config = dict(loaded.plan.config)
    if not reliability(with_defaults(config)).effectively_once:
        raise BadInput(f"--from-savepoint: topology {loaded.plan.name!r} is not "
                       "EFFECTIVELY_ONCE (topology.reliability.mode), so it keeps no state")
    stateful = {name for name, cls in loaded.compiled.component_classes.items()
                if isinstance(cls, type) and issubclass(cls, StatefulComponent)}
    try:
        path = find_savepoint(savepoint, savepoints_dir(cluster, config, env.home))
        manifest = read_savepoint(path)
        check_components(manifest, stateful, allow_missing)
    except SavepointError as exc:
        raise BadInput(str(exc)) from None
    click.echo(savepoint_summary(path, manifest))
    return {FROM_SAVEPOINT_KEY: str(path)}


def savepoint_summary(path: Path, manifest: dict[str, Any]) -> str:
    """The line that says which savepoint a submit starts from: its id, where it is, when
    it was taken, of which topology and checkpoint, and the components whose state it
    holds."""
    created = manifest.get("created")
    when = (time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(created))
            if isinstance(created, (int, float)) else "at an unknown time")
    components = sorted((manifest.get("components") or {}).items())
    held = ", ".join(f"{name} ({_tasks(info.get('tasks'))})"
                     for name, info in components) or "no component"
    return (f"starting from savepoint {manifest.get('savepoint_id', path.name)!r} ({path}): "
            f"taken {when} from topology {manifest.get('topology', '?')!r} at checkpoint "
            f"{manifest.get('checkpoint_id', '?')}; state of {held}")


def _tasks(count: object) -> str:
    return f"{count} task{'' if count == 1 else 's'}" if isinstance(count, int) else "? tasks"


def _containers(count: int) -> str:
    return f"{count} container{'s' if count != 1 else ''}"


def _report_local(submitted: Any, plan: LogicalPlan, deactivated: bool, env: Env) -> None:
    from engine.common.security.keys import NO_KEYS_IN_STATE  # deferred: CLI start-up time

    spec, name = submitted.spec, plan.name
    click.echo(f"submitted topology {name!r} ({spec.topology_id}): "
               f"{_containers(len(submitted.packing.container_plans))} + Topology Master"
               f"{', deactivated' if deactivated else ''}")
    click.echo("  components:")
    for line in planned_components(plan):
        click.echo(f"    {line}")
    click.echo(f"  working dir: {env.working_dir(name)}")
    if not submitted.keys_shared:
        click.echo(f"  note: {NO_KEYS_IN_STATE}", err=True)
    click.echo(f"  logs:        {spec.log_dir}  (heron logs {name})")
    click.echo(f"  state:       {spec.state.describe()}")


def _report_service(submitted: Any, plan: LogicalPlan, ref: ClusterRef,
                    config: ClusterConfig, deactivated: bool) -> None:
    spec, name = submitted.spec, plan.name
    click.echo(f"submitted topology {name!r} ({spec.topology_id}) to {ref}: "
               f"{_containers(len(submitted.packing.container_plans))} + Topology Master as "
               f"{config.scheduler} jobs{', deactivated' if deactivated else ''}")
    click.echo("  components:")
    for line in planned_components(plan):
        click.echo(f"    {line}")
    click.echo(f"  package:     {spec.package_url} (sha256 {spec.package_sha256[:12]}…)")
    click.echo(f"  scheduler:   {spec.process_log('scheduler')}")
    click.echo(f"  state:       {spec.state.describe()}")
    click.echo(f"  control it:  heron list|kill|restart|update ... --cluster {config.name}")


def _report_kubernetes(submitted: Any, ref: ClusterRef, config: ClusterConfig) -> None:
    from engine.scheduler.kubernetes import kubernetes_name  # deferred: CLI start-up time

    spec = submitted.spec
    k8s = kubernetes_name(spec.topology_name)
    click.echo(f"submitted topology {spec.topology_name!r} ({spec.topology_id}) to {ref}: "
               f"StatefulSets {k8s}-tmanager (1 pod) and {k8s}-executors "
               f"({len(submitted.packing.container_plans)} pods) "
               f"in namespace {config.get('heron.kubernetes.namespace', 'default')}")
    click.echo(f"  package: {spec.package_url} (sha256 {spec.package_sha256[:12]}…)")
    click.echo(f"  control it: heron kill|restart|update ... --cluster {config.name}")


def check_health_config(config: dict[str, Any]) -> None:
    """A Health Manager setting that is wrong is refused at submit (exit 2, naming the
    key), not left for the Health Manager to report from container 0."""
    # deferred: CLI start-up time
    from engine.healthmgr.errors import HealthConfigError
    from engine.healthmgr.policies.config import healthmgr_enabled, parse_health_config

    try:
        if healthmgr_enabled(config):
            parse_health_config(config)
    except HealthConfigError as exc:
        raise BadInput(f"invalid Health Manager setting {exc}") from None
