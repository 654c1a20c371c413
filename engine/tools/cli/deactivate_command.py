"""``heron deactivate NAME``: the spouts stop emitting; every process keeps running."""

from __future__ import annotations

import click

from engine.tools.cli.env import Env, common_options, set_active


@click.command("deactivate")
@click.argument("name")
@common_options
def deactivate_command(name: str, env: Env) -> None:
    """Deactivate topology NAME (spouts stop emitting; processes keep running)."""
    set_active(env, name, activate=False)
