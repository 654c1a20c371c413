"""``heron``: run Storm/streamparse topologies on this project's engines.

Exit codes: 0 success; 1 the topology failed while running; 2 bad input (project,
topology definition, options). Errors print as one line; ``--traceback`` shows more.
"""

from __future__ import annotations

import click

from engine.tools.cli.activate_command import activate_command
from engine.tools.cli.deactivate_command import deactivate_command
from engine.tools.cli.health_command import health_command
from engine.tools.cli.kill_command import kill_command
from engine.tools.cli.list_command import list_command
from engine.tools.cli.logs_command import logs_command
from engine.tools.cli.metrics_command import metrics_command
from engine.tools.cli.open_command import open_command
from engine.tools.cli.restart_command import restart_command
from engine.tools.cli.run_command import run_command
from engine.tools.cli.savepoint_command import savepoint_command
from engine.tools.cli.submit_command import submit_command
from engine.tools.cli.tracker_command import tracker_command
from engine.tools.cli.ui_command import ui_command
from engine.tools.cli.update_command import update_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="heron-storm-compat", prog_name="heron")
def main() -> None:
    """Run Storm/streamparse topologies on the storm or heron engine."""


# one module per command (Heron's tools/cli)
for _command in (run_command, submit_command, kill_command, activate_command, deactivate_command,
                 restart_command, list_command, logs_command, metrics_command, update_command,
                 health_command, tracker_command, ui_command, open_command, savepoint_command):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    main()
