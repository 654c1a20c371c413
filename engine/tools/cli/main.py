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
from collections.abc import Iterator, MutableMapping

import click

#: command name -> the module holding its click command (``<module>.<name>_command``)
COMMANDS = {name: f"engine.tools.cli.{name}_command" for name in (
    "run", "submit", "kill", "activate", "deactivate", "restart", "list", "logs", "metrics",
    "update", "health", "tracker", "ui", "open", "savepoint")}


class CommandsOnDemand(MutableMapping[str, click.Command]):
    """The group's commands: every name known up front (help, completion and
    ``main.commands`` see them all), each command imported the first time it is read."""

    def __init__(self) -> None:
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            if name not in COMMANDS:
                raise KeyError(name)
            module = importlib.import_module(COMMANDS[name])
            self._loaded[name] = getattr(module, f"{name}_command")
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError(f"heron's commands are fixed: cannot remove {name!r}")

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(COMMANDS), **dict.fromkeys(self._loaded)})

    def __len__(self) -> int:
        return len(set(COMMANDS) | set(self._loaded))


@click.group(commands=CommandsOnDemand(),
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="heron-storm-compat", prog_name="heron")
def main() -> None:
    """Run Storm/streamparse topologies on the storm or heron engine."""


if __name__ == "__main__":  # pragma: no cover
    main()
