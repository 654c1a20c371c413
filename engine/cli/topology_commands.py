"""``heron submit | kill | activate | deactivate | restart | list``.

The state manager is the source of truth, as in Heron: a topology exists when
``topologies/<name>`` does; the scheduler service and the Topology Master publish where
they listen (``schedulers/<name>``, ``tmanagers/<name>``) and the CLI talks to them over
zmq. Working directories live under ``HOME/topologies/<name>`` (HOME: ``--home``,
``$HERON_HOME``, ``~/.heron``), the local state tree under ``HOME/state``.

Errors print as one line, ``heron: error: ...``: exit 2 for bad input (unknown topology,
a name already running, bad options, a project that does not load), 1 for runtime
failures (a state manager or a process that does not answer).
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from engine.cli.cluster_submit import (kill_on_kubernetes, kubernetes_scheduler_of,
                                       submit_to_kubernetes, submit_to_remote_cluster)
from engine.cli.display import planned_components
from engine.cli.env import (TM_TIMEOUT_SECS, BadInput, CommandError, Env, ask_topology_master,
                            common_options, require_topology, topology_security)
from engine.cli.logs_command import logs_command
from engine.cli.metrics_command import crash_looping, fetch, metrics_command
from engine.cli.update_command import update_command
from engine.cli.health_command import health_command

#: how long the scheduler may take to stop everything and answer a kill
KILL_TIMEOUT_SECS = 60.0
RESTART_TIMEOUT_SECS = 60.0

# -- submit --------------------------------------------------------------------------------
@click.command("submit")
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
@click.option("--deploy-deactivated", is_flag=True,
              help="Start the topology deactivated (PAUSED); `heron activate` starts it.")
@click.option("--dry-run", is_flag=True,
              help="Kubernetes: print the manifests (secrets redacted); nothing is submitted.")
@common_options
def submit_command(cluster: str, project: Path, name: str | None, env_name: str | None,
                   options: tuple[str, ...], ackers: int | None, workers: int | None,
                   config_file: Path | None, multilang: bool, deploy_deactivated: bool,
                   dry_run: bool, env: Env) -> None:
    """Submit PROJECT (a streamparse project or a topology file) to CLUSTER.

    `local` is this machine; any other cluster is described in HOME/conf/CLUSTER/
    (scheduler.yaml, statemgr.yaml, uploader.yaml; docs/clusters.md). The topology runs
    in the background under a scheduler service until `heron kill`.
    """
    from compat.storm_api.project import parse_cli_options
    from engine.deploy import TopologyExistsError, deploy
    from engine.security.keys import NO_KEYS_IN_STATE, keys_belong_in
    from engine.launch import Submission
    from engine.packing import PackingError
    from engine.scheduler import SchedulerStartError, start_detached, wait_until_serving
    from engine.security.private import runtime_root
    from engine.submission import load_topology

    from engine.cluster.config import ClusterRef, load_cluster

    ref = ClusterRef.parse(cluster)
    cluster_config = load_cluster(env.home, ref.cluster)
    if cluster_config.is_local:
        runtime_root()  # the ipc sockets' root: refused (exit 2, naming it) before anything starts
    cli_options = parse_cli_options(options)
    loaded = load_topology(project, name=name, env=env_name, config_file=config_file,
                           cli_options=cli_options, ackers=ackers, workers=workers)
    for note in loaded.notes:
        click.echo(note, err=True)
    plan = loaded.plan
    _check_health_config(dict(plan.config))
    topology_name = plan.name
    if dry_run and cluster_config.scheduler != "kubernetes":
        raise BadInput("--dry-run prints a Kubernetes cluster's manifests; "
                       f"{ref.cluster!r} uses the {cluster_config.scheduler} scheduler")
    if not cluster_config.is_local:

        submission = Submission(
            project=str(Path(project).resolve()), name=topology_name, env=loaded.env,
            config_file=str(Path(config_file).resolve()) if config_file else None,
            options=cli_options, ackers=ackers, workers=workers)
        serializer = str(loaded.project.config.get("serializer") or "json")
        if cluster_config.scheduler == "kubernetes":
            return submit_to_kubernetes(cluster_config, ref, loaded, submission, env,
                                        deactivated=deploy_deactivated, multilang=multilang,
                                        multilang_serializer=serializer, dry_run=dry_run)
        return submit_to_remote_cluster(cluster_config, ref, loaded, submission, env,
                                        deactivated=deploy_deactivated, multilang=multilang,
                                        multilang_serializer=serializer)
    state = env.open_state()
    try:
        if state.get("topologies", topology_name) is not None:
            raise BadInput(f"topology {topology_name!r} is already running; "
                           f"heron kill {topology_name} first")
        working_dir = env.working_dir(topology_name)
        _prepare_working_dir(working_dir, topology_name)
        try:
            spec = deploy(loaded, state=state, state_spec=env.launch_state_spec(working_dir),
                          working_dir=working_dir,
                          submission=Submission(
                              project=str(Path(project).resolve()), name=topology_name,
                              env=loaded.env,
                              config_file=str(Path(config_file).resolve()) if config_file else None,
                              options=cli_options, ackers=ackers, workers=workers),
                          deactivated=deploy_deactivated, multilang=multilang,
                          multilang_serializer=str(loaded.project.config.get("serializer") or "json"))
        except TopologyExistsError as exc:
            raise BadInput(str(exc)) from None
        except PackingError as exc:
            raise BadInput(str(exc)) from None
        packing = state.get("packingplans", topology_name)
        topology_id = spec.topology_id
        keys_shared = keys_belong_in(state)
        proc = start_detached(spec)
        try:
            wait_until_serving(spec, proc, state)
        except SchedulerStartError as exc:
            state.clean(topology_name)
            raise CommandError(f"{topology_name}: {exc}") from None
    finally:
        state.close()
    containers = len(packing.container_plans)
    click.echo(f"submitted topology {topology_name!r} ({topology_id}): {containers} "
               f"container{'s' if containers != 1 else ''} + Topology Master"
               f"{', deactivated' if deploy_deactivated else ''}")
    click.echo("  components:")
    for line in planned_components(plan):
        click.echo(f"    {line}")
    click.echo(f"  working dir: {working_dir}")
    if not keys_shared:
        click.echo(f"  note: {NO_KEYS_IN_STATE}", err=True)
    click.echo(f"  logs:        {spec.log_dir}  (heron logs {topology_name})")
    click.echo(f"  state:       {spec.state.describe()}")



def _prepare_working_dir(working_dir: Path, name: str) -> None:
    """A fresh working dir; a previous run's is removed unless its processes still live."""
    from engine.process import read_pid_file

    if not working_dir.exists():
        return
    alive = [p.pid for p in map(read_pid_file, sorted((working_dir / "pids").glob("*.pid"))) if p]
    if alive:
        raise CommandError(f"processes of an earlier run of {name!r} are still alive (pids "
                           f"{', '.join(map(str, alive))}); heron kill {name} first")
    shutil.rmtree(working_dir)


# -- kill ----------------------------------------------------------------------------------
@click.command("kill")
@click.argument("name")
@click.option("--wait", "wait_secs", type=float, default=5.0, show_default=True,
              help="Seconds to let in-flight tuples drain after deactivating.")
@common_options
def kill_command(name: str, wait_secs: float, env: Env) -> None:
    """Kill topology NAME: deactivate, drain, stop every process, remove its state."""
    from engine.messages import common_pb2, scheduler_pb2, tmanager_pb2
    from engine.network import request
    from engine.network.sockets import RequestTimeout
    from engine.tmanager.drain import wait_drained

    state = env.open_state()
    try:
        topology = require_topology(state, name)
        tm = state.get("tmanagers", name)
        security = topology_security(state, name, env.working_dir(name))
        if tm is not None and tm.controller_endpoint:
            try:
                request(tm.controller_endpoint, tmanager_pb2.TopologyDeactivateRequest(
                    topology_name=name, topology_id=tm.topology_id or topology.id),
                    timeout=min(TM_TIMEOUT_SECS, max(wait_secs, 1.0)), security=security)
                if wait_secs > 0 and not wait_drained(tm.controller_endpoint, wait_secs,
                                                      security=security):
                    click.echo(f"{name!r} was still moving tuples after {wait_secs:g}s; "
                               "stopping it anyway", err=True)
            except RequestTimeout:
                click.echo(f"the Topology Master of {name!r} did not answer; killing without "
                           f"draining", err=True)

        if kill_on_kubernetes(env, state, name):
            click.echo(f"killed topology {name!r}")
            return
        scheduler = state.get("schedulers", name)
        answered = False
        if scheduler is not None and scheduler.http_endpoint and _scheduler_alive(env, name):
            try:
                response = request(scheduler.http_endpoint,
                                   scheduler_pb2.KillTopologyRequest(topology_name=name),
                                   timeout=KILL_TIMEOUT_SECS, security=security)
                if response.status.status != common_pb2.OK:
                    raise CommandError(f"the scheduler refused to kill {name!r}: "
                                       f"{response.status.message}")
                answered = True
            except RequestTimeout:
                # It may have finished but lost the reply: the state says.
                answered = state.get("topologies", name) is None
        if not answered:
            _kill_from_pid_files(env, state, name, topology.id)
            click.echo(f"the scheduler of {name!r} did not answer; stopped its processes "
                       f"from their pid files and removed its state")
    finally:
        state.close()
    # the submission's copy of the ZooKeeper digest goes with the topology (logs stay)
    (env.working_dir(name) / "secrets" / "zk-auth").unlink(missing_ok=True)
    click.echo(f"killed topology {name!r}")


def _scheduler_alive(env: Env, name: str) -> bool:
    """False when the scheduler's pid file shows it is dead (a ZooKeeper location can
    outlive a SIGKILLed scheduler by a session timeout); True when alive or unknown."""
    from engine.process import read_pid_file

    pid_file = env.working_dir(name) / "pids" / "scheduler.pid"
    if not pid_file.exists():
        return True
    return read_pid_file(pid_file) is not None


def _kill_from_pid_files(env: Env, state: Any, name: str, topology_id: str) -> None:
    """Stop the scheduler, then the executors, then everything else with a pid file;
    then clean the state and the ipc dir the scheduler would have cleaned."""
    from engine.network.endpoints import ipc_dir
    from engine.process import read_pid_file, stop_groups

    pid_dir = env.working_dir(name) / "pids"
    files = sorted(pid_dir.glob("*.pid"))
    phases = [[f for f in files if f.name == "scheduler.pid"],
              [f for f in files if f.name.startswith("executor-")]]
    phases.append([f for f in files if f not in phases[0] and f not in phases[1]])
    for phase in phases:
        procs = [p for p in map(read_pid_file, phase) if p is not None]
        stop_groups([p.pid for p in procs], grace=3.0)
    state.clean(name)
    shutil.rmtree(ipc_dir(topology_id), ignore_errors=True)


def _check_health_config(config: dict[str, Any]) -> None:
    """A Health Manager setting that is wrong is refused at submit (exit 2, naming the
    key), not left for the Health Manager to report from container 0."""
    from engine.healthmgr.errors import HealthConfigError
    from engine.healthmgr.policies.config import healthmgr_enabled, parse_health_config

    try:
        if healthmgr_enabled(config):
            parse_health_config(config)
    except HealthConfigError as exc:
        raise BadInput(f"invalid Health Manager setting {exc}") from None


# -- activate / deactivate -----------------------------------------------------------------
def _control(env: Env, name: str, activate: bool) -> None:
    from engine.messages import common_pb2, tmanager_pb2

    verb = "activate" if activate else "deactivate"
    cls = tmanager_pb2.TopologyActivateRequest if activate else tmanager_pb2.TopologyDeactivateRequest
    response = ask_topology_master(
        env, name, lambda topology, tm: cls(topology_name=name,
                                            topology_id=tm.topology_id or topology.id),
        f"cannot {verb} {name!r}")
    status = response.status.status
    if status == common_pb2.OK:
        click.echo(f"{verb}d topology {name!r}")
    elif status in (common_pb2.TOPOLOGY_ALREADY_ACTIVE, common_pb2.TOPOLOGY_ALREADY_DEACTIVE):
        click.echo(f"topology {name!r} is already {'active' if activate else 'deactivated'}")
    else:
        detail = response.status.message or common_pb2.StatusCode.Name(status)
        raise CommandError(f"cannot {verb} {name!r}: {detail}")


@click.command("activate")
@click.argument("name")
@common_options
def activate_command(name: str, env: Env) -> None:
    """Activate topology NAME (spouts start emitting)."""
    _control(env, name, activate=True)


@click.command("deactivate")
@click.argument("name")
@common_options
def deactivate_command(name: str, env: Env) -> None:
    """Deactivate topology NAME (spouts stop emitting; processes keep running)."""
    _control(env, name, activate=False)


# -- restart -------------------------------------------------------------------------------
@click.command("restart")
@click.argument("name")
@click.argument("container", type=int, default=-1)
@common_options
def restart_command(name: str, container: int, env: Env) -> None:
    """Restart CONTAINER of topology NAME (default -1: every container)."""
    from engine.messages import common_pb2, scheduler_pb2
    from engine.network import request
    from engine.network.sockets import RequestTimeout


    state = env.open_state()
    try:
        require_topology(state, name)
        scheduler = state.get("schedulers", name)
        security = topology_security(state, name, env.working_dir(name))
        library = kubernetes_scheduler_of(env, state, name)
    finally:
        state.close()
    if library is not None:
        library.restart(container)
        click.echo(f"restarted {'every container' if container == -1 else f'container {container}'}"
                   f" of {name!r} (Kubernetes starts the deleted pods again)")
        return
    if scheduler is None or not scheduler.http_endpoint:
        raise CommandError(f"the scheduler of {name!r} is not running (no schedulers/{name})")
    try:
        response = request(scheduler.http_endpoint, scheduler_pb2.RestartTopologyRequest(
            topology_name=name, container_index=container), timeout=RESTART_TIMEOUT_SECS,
            security=security)
    except RequestTimeout:
        raise CommandError(f"the scheduler of {name!r} did not answer within "
                           f"{RESTART_TIMEOUT_SECS:g}s") from None
    if response.status.status != common_pb2.OK:
        raise BadInput(f"cannot restart {name!r}: {response.status.message}")
    click.echo(response.status.message or f"restarted {name!r}")


# -- list ----------------------------------------------------------------------------------
@click.command("list")
@common_options
def list_command(env: Env) -> None:
    """List the topologies in the state manager."""
    from rich.table import Table

    from engine.cli.display import make_console
    from engine.messages import topology_pb2

    state = env.open_state()
    rows = []
    try:
        for name in state.topologies():
            topology = state.get("topologies", name)
            if topology is None:
                continue
            pplan = state.get("pplans", name)
            topo_state = (pplan.topology.state if pplan is not None and pplan.HasField("topology")
                          else topology.state)
            packing = state.get("packingplans", name)
            execution = state.get("executionstate", name)
            scheduler = state.get("schedulers", name)
            working = env.working_dir(name)
            if scheduler is not None and scheduler.job_page_link:
                working = Path(scheduler.job_page_link[0].removeprefix("file://"))
            submitted = (datetime.fromtimestamp(execution.submission_time).strftime(
                "%Y-%m-%d %H:%M:%S") if execution is not None and execution.submission_time
                else "-")
            rows.append((name, topology.id, topology_pb2.TopologyState.Name(topo_state),
                         str(len(packing.container_plans)) if packing is not None else "-",
                         submitted, str(working) if working.exists() else "-"))
    finally:
        state.close()
    statuses = {row[0]: _restart_status(env, row[0]) for row in rows}
    rows = [(*row[:3], statuses[row[0]][0], *row[3:]) for row in rows]
    console = make_console()
    if not rows:
        console.print(f"no topologies ({env.state_spec().describe()})")
        return
    table = Table(title=f"topologies ({env.state_spec().describe()})", title_justify="left")
    for column in ("name", "id", "state", "status", "containers", "submitted", "working dir"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for name, (_, details) in statuses.items():
        for line in details:
            console.print(f"[bold red]{name}: crash-looping[/] {line}", highlight=False)
    for row in rows:
        for line in _cluster_status(Path(row[-1])) if row[-1] != "-" else []:
            console.print(f"{row[0]}: {line}", highlight=False)


def _cluster_status(working_dir: Path) -> list[str]:
    """Where a cluster scheduler runs the containers, and how long each recovery took
    (its ``scheduler-status.json``, engine/scheduler/slurm)."""
    import json

    from engine.scheduler.slurm.scheduler import STATUS_FILE

    try:
        status = json.loads((working_dir / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return []
    jobs = status.get("jobs", [])
    placed = ", ".join(f"container {j['container']} job {j['job_id']} {j['state'].lower()}"
                       f"{' on ' + j['node'] if j.get('node') else ''}" for j in jobs)
    lines = [f"{status.get('scheduler', 'cluster')} jobs: {placed or 'none'}"]
    if status.get("excluded"):
        lines.append(f"nodes excluded (down): {', '.join(status['excluded'])}")
    for recovery in status.get("recoveries", [])[-5:]:
        lines.append(f"recovered container {recovery['container']} in {recovery['seconds']:.1f} s "
                     f"after {recovery['cause']}")
    return lines


#: how long `heron list` waits for each Topology Master's metrics
LIST_TM_TIMEOUT_SECS = 2.0


def _restart_status(env: Env, name: str) -> tuple[str, list[str]]:
    """("ok" or the components crash-looping, one "instance: last error" line each), from
    the Topology Master's metrics (engine.process.restart_policy); "-" when it does not
    answer."""

    try:
        looping = crash_looping(fetch(env, name, None, timeout=LIST_TM_TIMEOUT_SECS))
    except (CommandError, BadInput):
        return "-", []
    if not looping:
        return "ok", []
    components = sorted({component for component, _ in looping})
    return (f"crash-looping: {', '.join(components)}",
            [f"{instance}: {error}" for (_, instance), error in looping.items()])


COMMANDS = (submit_command, kill_command, activate_command, deactivate_command,
            restart_command, list_command)


def register(group: click.Group) -> None:
    """Add the topology commands to the ``heron`` group."""
    for command in (*COMMANDS, logs_command, metrics_command, update_command, health_command):
        group.add_command(command)
