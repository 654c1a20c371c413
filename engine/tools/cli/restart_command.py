"""``heron restart NAME [CONTAINER]``: restart one container or every one, through the
topology's scheduler (engine/submitter/runtime.py)."""

from __future__ import annotations

import click

from engine.tools.cli.env import Env, common_options, require_topology, topology_security

RESTART_TIMEOUT_SECS = 60.0


@click.command("restart")
@click.argument("name")
@click.argument("container", type=int, default=-1)
@common_options
def restart_command(name: str, container: int, env: Env) -> None:
    """Restart CONTAINER of topology NAME (default -1: every container)."""
    from engine.submitter.runtime import RuntimeManager  # deferred: CLI start-up time

    state = env.open_state()
    try:
        require_topology(state, name)
        runtime = RuntimeManager(state, name, home=env.home, working_dir=env.working_dir(name),
                                 security=topology_security(state, name, env.working_dir(name)))
        library, endpoint = runtime.kubernetes_scheduler(), runtime.scheduler_endpoint()
    finally:
        state.close()
    click.echo(runtime.restart_with(library, endpoint, container, RESTART_TIMEOUT_SECS))
