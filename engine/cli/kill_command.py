"""``heron kill NAME``: deactivate, drain, stop every process, remove its state
(engine/submitter/runtime.py does it on whichever cluster runs the topology)."""

from __future__ import annotations

import click

from engine.cli.env import Env, common_options, require_topology, topology_security

#: how long the scheduler may take to stop everything and answer a kill
KILL_TIMEOUT_SECS = 60.0


@click.command("kill")
@click.argument("name")
@click.option("--wait", "wait_secs", type=float, default=5.0, show_default=True,
              help="Seconds to let in-flight tuples drain after deactivating.")
@common_options
def kill_command(name: str, wait_secs: float, env: Env) -> None:
    """Kill topology NAME: deactivate, drain, stop every process, remove its state."""
    from engine.submitter.runtime import RuntimeManager  # deferred: CLI start-up time

    state = env.open_state()
    try:
        topology = require_topology(state, name)
        runtime = RuntimeManager(state, name, home=env.home, working_dir=env.working_dir(name),
                                 security=topology_security(state, name, env.working_dir(name)),
                                 notify=lambda line: click.echo(line, err=True))
        runtime.deactivate_and_drain(topology, wait_secs)
        how = runtime.kill(topology, KILL_TIMEOUT_SECS)
        if how == "kubernetes":
            click.echo(f"killed topology {name!r}")
            return
        if how == "pid files":
            click.echo(f"the scheduler of {name!r} did not answer; stopped its processes "
                       f"from their pid files and removed its state")
    finally:
        state.close()
    # the submission's copy of the ZooKeeper digest goes with the topology (logs stay)
    (env.working_dir(name) / "secrets" / "zk-auth").unlink(missing_ok=True)
    click.echo(f"killed topology {name!r}")
