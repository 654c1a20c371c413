"""``heron``: run Storm/streamparse topologies on this project's engines.

Exit codes: 0 success; 1 the topology failed while running; 2 bad input (project,
topology definition, options). Errors print as one line; ``--traceback`` shows more.

Each command lives in its own module (``engine/tools/cli/<name>_command.py``), imported
when that command runs (or when help lists them): ``heron list`` does not load what
``heron submit`` needs (the submitter, packing, every scheduler plug-in), so a command
that only reads a topology's state answers in a fraction of the start-up time.
"""

from __future__ import annotations

import importlib

import click

#: command name -> the module holding its click command (``<module>.<name>_command``)
COMMANDS = {name: f"engine.tools.cli.{name}_command" for name in (
    "run", "submit", "kill", "activate", "deactivate", "restart", "list", "logs", "metrics",
    "update", "health", "tracker", "ui", "open", "savepoint")}


class CommandsOnDemand(click.Group):
    """A click group whose commands load from :data:`COMMANDS` when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        command: click.Command = getattr(importlib.import_module(module),
                                         f"{cmd_name}_command")
        return command


@click.group(cls=CommandsOnDemand, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="heron-storm-compat", prog_name="heron")
def main() -> None:
    """Run Storm/streamparse topologies on the storm or heron engine."""


if __name__ == "__main__":  # pragma: no cover
    main()
