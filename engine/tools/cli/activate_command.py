"""``heron activate NAME``: the spouts start emitting (through the Topology Master)."""

from __future__ import annotations

import click

from engine.tools.cli.env import Env, common_options, set_active


@click.command("activate")
@click.argument("name")
@common_options
def activate_command(name: str, env: Env) -> None:
    """Activate topology NAME (spouts start emitting)."""
    set_active(env, name, activate=True)
