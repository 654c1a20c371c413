"""``heron kill NAME``: deactivate, drain, stop every process, remove its state
(engine/submitter/runtime.py does it on whichever cluster runs the topology), then,
whether or not the topology's scheduler answered, cancel its cluster jobs and remove its
package and secrets (engine/submitter/cleanup.py)."""

from __future__ import annotations

import click

from engine.cli.env import (CommandError, Env, common_options, require_topology,
                            topology_security)
from engine.cli.savepoint_command import take_savepoint

#: how long the scheduler may take to stop everything and answer a kill
KILL_TIMEOUT_SECS = 60.0


@click.command("kill")
@click.argument("name")
@click.option("--wait", "wait_secs", type=float, default=5.0, show_default=True,
              help="Seconds to let in-flight tuples drain after deactivating.")
@click.option("--savepoint", "with_savepoint", is_flag=True,
              help="Take a savepoint first (EFFECTIVELY_ONCE): nothing is killed if it fails.")
@click.option("--savepoint-id", metavar="ID", help="With --savepoint: its name.")
@common_options
def kill_command(name: str, wait_secs: float, with_savepoint: bool, savepoint_id: str | None,
                 env: Env) -> None:
    """Kill topology NAME: deactivate, drain, stop every process, remove its state."""
    if savepoint_id and not with_savepoint:
        raise CommandError("--savepoint-id goes with --savepoint")
    # deferred: CLI start-up time
    from engine.submitter.cleanup import clean_cluster, cluster_of
    from engine.submitter.runtime import RuntimeManager

    state = env.open_state()
    try:
        topology = require_topology(state, name)
        execution = state.get("executionstate", name)
        runtime = RuntimeManager(state, name, home=env.home, working_dir=env.working_dir(name),
                                 security=topology_security(state, name, env.working_dir(name)),
                                 notify=lambda line: click.echo(line, err=True))
        runtime.deactivate_and_drain(topology, wait_secs)
        if with_savepoint:
            # after the drain, and the last checkpoint: what the sinks committed is all in it
            path = take_savepoint(env, name, savepoint_id, final=True)
            click.echo(f"savepoint of {name!r} written: {path}")
        how = runtime.kill(topology, KILL_TIMEOUT_SECS)
    finally:
        state.close()
    if how == "kubernetes":
        click.echo(f"killed topology {name!r}")
        return
    if how == "pid files":
        click.echo(f"the scheduler of {name!r} did not answer; stopped its processes "
                   f"from their pid files and removed its state")
    # whether or not the scheduler answered: its cluster jobs, its package and the
    # working directory's secrets go with the topology (logs stay)
    cancelled = clean_cluster(cluster_of(env.home, execution), name, topology.id,
                              env.working_dir(name))
    if cancelled:
        click.echo(f"cancelled Slurm jobs {' '.join(cancelled)} of {name!r}")
    click.echo(f"killed topology {name!r}")
