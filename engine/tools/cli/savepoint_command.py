"""``heron savepoint NAME [--id ID]``: a named, self-contained copy of a running
effectively-once topology's state that retention never deletes; start a topology from it
with ``heron submit ... --from-savepoint ID`` (docs/stateful.md, "Savepoints")."""

from __future__ import annotations

import click

from engine.tools.cli.env import CommandError, Env, ask_topology_master, common_options

#: a savepoint is a checkpoint taken now and copied: as long as a checkpoint may take
SAVEPOINT_TIMEOUT_SECS = 120.0


def take_savepoint(env: Env, name: str, savepoint_id: str | None,
                   timeout: float = SAVEPOINT_TIMEOUT_SECS, final: bool = False) -> str:
    """Ask the Topology Master for a savepoint and wait until it is written; its path.
    ``final``: the topology is being stopped, no checkpoint may follow it."""
    # deferred: CLI start-up time
    from engine.messages import ckptmgr_pb2, common_pb2
    from engine.statefulstorage.savepoints import SavepointError, check_id, default_id

    try:
        wanted = check_id(savepoint_id) if savepoint_id else default_id(name)
    except SavepointError as exc:
        raise CommandError(str(exc)) from None
    answer = ask_topology_master(
        env, name, lambda *_: ckptmgr_pb2.SavepointRequest(topology_name=name,
                                                           savepoint_id=wanted, final=final),
        f"cannot take a savepoint of {name!r}", timeout=timeout)
    if answer.status.status != common_pb2.OK:
        raise CommandError(f"cannot take a savepoint of {name!r}: {answer.status.message}")
    return answer.path


@click.command("savepoint")
@click.argument("name")
@click.option("--id", "savepoint_id", metavar="ID",
              help="The savepoint's name (default: NAME-<UTC date and time>).")
@common_options
def savepoint_command(name: str, savepoint_id: str | None, env: Env) -> None:
    """Take a savepoint of running topology NAME (EFFECTIVELY_ONCE)."""
    path = take_savepoint(env, name, savepoint_id)
    click.echo(f"savepoint of {name!r} written: {path}")
    click.echo(f"start from it: heron submit CLUSTER PROJECT -n {name} --from-savepoint {path}")
