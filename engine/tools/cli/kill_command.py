"""``heron kill NAME``: deactivate, drain, stop every process, remove its state
(engine/submitter/runtime.py does it on whichever cluster runs the topology), then,
whether or not the topology's scheduler answered, cancel its cluster jobs and remove its
package and secrets (engine/submitter/cleanup.py), and the heronpy definition ``heron
submit FILE.pex - ...`` kept for it (engine/tools/cli/heronpy_files.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from engine.messages import common_pb2, tmanager_pb2, topology_pb2
from engine.submitter.errors import SubmitterError
from engine.tools.cli.env import (
    BadInput,
    CommandError,
    Env,
    ask_topology_master,
    common_options,
    require_topology,
    topology_security,
)
from engine.tools.cli.savepoint_command import take_savepoint

if TYPE_CHECKING:  # types only: deferred at run time for the CLI's start-up time
    from engine.spi.statemgr import StateManager

#: how long the scheduler may take to stop everything and answer a kill
KILL_TIMEOUT_SECS = 60.0


@click.command("kill")
@click.argument("name")
@click.option("--wait", "wait_secs", type=float, default=5.0, show_default=True,
              help="Seconds to let in-flight tuples drain after deactivating.")
@click.option("--savepoint", "with_savepoint", is_flag=True,
              help="Take a savepoint first (EFFECTIVELY_ONCE): if it fails, nothing is "
                   "killed and the topology runs on.")
@click.option("--savepoint-id", metavar="ID", help="With --savepoint: its name.")
@click.option("--keep-checkpoints", is_flag=True,
              help="Keep the topology's checkpoints (EFFECTIVELY_ONCE); by default they go "
                   "with it (savepoints always stay).")
@common_options
def kill_command(name: str, wait_secs: float, with_savepoint: bool, savepoint_id: str | None,
                 keep_checkpoints: bool, env: Env) -> None:
    """Kill topology NAME: deactivate, drain, stop every process, remove its state and
    checkpoints (savepoints stay)."""
    if savepoint_id and not with_savepoint:
        raise CommandError("--savepoint-id goes with --savepoint")
    # deferred: CLI start-up time
    from engine.submitter.cleanup import (
        checkpoint_dir,
        clean_cluster,
        cluster_of,
        remove_checkpoints,
    )
    from engine.submitter.runtime import RuntimeManager
    from engine.tools.cli.heronpy_files import kept_definition, remove_kept_definition

    # a heronpy definition `heron submit` kept for this topology's processes goes with it
    definition = kept_definition(env.home, env.working_dir(name))
    state = env.open_state()
    try:
        topology = require_topology(state, name)
        if with_savepoint:
            refuse_savepoint_unless_effectively_once(name, topology)
        execution = state.get("executionstate", name)
        runtime = RuntimeManager(state, name, home=env.home, working_dir=env.working_dir(name),
                                 security=topology_security(state, name, env.working_dir(name)),
                                 notify=lambda line: click.echo(line, err=True))
        was_active = _active(state, name)
        runtime.deactivate_and_drain(topology, wait_secs)
        if with_savepoint:
            # after the drain, and the last checkpoint: what the sinks committed is all in it
            try:
                path = take_savepoint(env, name, savepoint_id, final=True)
            except CommandError as exc:
                exc.args = (f"{exc}; {_not_killed(env, name, was_active)}",)
                raise
            click.echo(f"savepoint of {name!r} written: {path}")
            try:
                how = runtime.kill(topology, KILL_TIMEOUT_SECS)
            except SubmitterError as exc:
                exc.args = (f"{exc}; the savepoint {path} was written, and {name!r} is left "
                            f"deactivated, taking no checkpoints: `heron kill {name}` again, "
                            f"or `heron activate {name}` to run it on",)
                raise
        else:
            how = runtime.kill(topology, KILL_TIMEOUT_SECS)
    finally:
        state.close()
    remove_kept_definition(definition)
    if how == "kubernetes":
        click.echo(f"killed topology {name!r}")
        return
    if how == "pid files":
        click.echo(f"the scheduler of {name!r} did not answer; stopped its processes "
                   f"from their pid files and removed its state")
    # whether or not the scheduler answered: its cluster jobs, its package and the
    # working directory's secrets go with the topology (logs stay)
    cancelled = clean_cluster(cluster_of(env.home, execution), name, topology.id,
                              env.working_dir(name),
                              report=lambda line: click.echo(line, err=True))
    if cancelled:
        click.echo(f"cancelled Slurm jobs {' '.join(cancelled)} of {name!r}")
    checkpoints = checkpoint_dir(topology, env.working_dir(name))
    if checkpoints is not None and checkpoints.is_dir():
        if keep_checkpoints:
            click.echo(f"kept the checkpoints of {name!r} in {checkpoints} (--keep-checkpoints)")
        else:
            try:
                size = remove_checkpoints(checkpoints)
            except OSError as exc:
                raise SubmitterError(f"killed {name!r} but cannot remove its checkpoints "
                                     f"in {checkpoints}: {exc}") from None
            click.echo(f"removed the checkpoints of {name!r}: {checkpoints} "
                       f"({size / 1e6:.1f} MB; savepoints stay)")
    click.echo(f"killed topology {name!r}")


def reliability_mode(topology: topology_pb2.Topology) -> str:
    """The reliability mode the stored ``topology`` runs in, as the engines read it:
    ``topology.reliability.mode``, else Storm's acking (ATLEAST_ONCE with ackers,
    ATMOST_ONCE without)."""
    # deferred: CLI start-up time
    from engine.common.plan.topology_config import topology_config
    from engine.config.errors import ConfigError
    from engine.config.keys import RELIABILITY_MODE_KEY
    from engine.config.reliability import reliability

    conf = topology_config(topology)
    mode = conf.get(RELIABILITY_MODE_KEY)
    if mode is not None:
        return str(mode).upper()
    try:
        return "ATLEAST_ONCE" if reliability(conf).acking else "ATMOST_ONCE"
    except ConfigError:
        return "ATLEAST_ONCE"  # Storm's default: one acker


def refuse_savepoint_unless_effectively_once(name: str,
                                             topology: topology_pb2.Topology) -> None:
    """``heron kill --savepoint`` of a topology that takes no checkpoints: BadInput (exit
    2) naming it and its mode, before anything is deactivated, drained or killed."""
    # deferred: CLI start-up time
    from engine.submitter.stateful_guard import effectively_once

    if not effectively_once(topology):
        raise BadInput(f"cannot take a savepoint of {name!r}: it runs "
                       f"{reliability_mode(topology)}, and only EFFECTIVELY_ONCE topologies "
                       f"(topology.reliability.mode) take checkpoints; nothing was deactivated "
                       f"or killed (`heron kill {name}` kills it without a savepoint)")


def _active(state: StateManager, name: str) -> bool:
    """Whether the topology runs activated now (its physical plan says; True when there
    is none yet, as a topology starts activated)."""
    pplan = state.get("pplans", name)
    return pplan is None or pplan.topology.state != topology_pb2.PAUSED


def _not_killed(env: Env, name: str, was_active: bool) -> str:
    """After the savepoint of ``heron kill --savepoint`` failed: nothing is killed, and a
    topology the kill deactivated is activated again (as Flink's stop-with-savepoint leaves
    the job running when its savepoint fails). What was done, for the error line."""
    if not was_active:
        return (f"{name!r} was not killed; it stays deactivated, as it was before "
                f"(`heron activate {name}` runs it on)")
    try:
        answer = ask_topology_master(
            env, name, lambda topology, tm: tmanager_pb2.TopologyActivateRequest(
                topology_name=name, topology_id=tm.topology_id or topology.id),
            f"cannot activate {name!r} again")
        status = answer.status.status
        if status not in (common_pb2.OK, common_pb2.TOPOLOGY_ALREADY_ACTIVE):
            raise CommandError(answer.status.message or common_pb2.StatusCode.Name(status))
    except CommandError as exc:
        return (f"{name!r} was not killed, but is left deactivated: activating it again "
                f"failed ({exc}); `heron activate {name}` runs it on")
    return f"{name!r} was not killed: it is activated again and takes checkpoints as before"
