"""``heron run PROJECT``: run a topology in the foreground on either engine (the work is
engine/tools/cli/run.py's)."""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import click
from rich.logging import RichHandler

from compat.storm_api.project import ProjectError
from engine.tools.cli import errors as cli_errors
from engine.tools.cli.display import make_console
from engine.tools.cli.topology_args import TopologyArgsCommand, main_form


@click.command("run", cls=TopologyArgsCommand, file_index=0)
@click.argument("project", type=click.Path(exists=False, path_type=Path), default=".")
@click.option("-n", "--name", help="Topology to run: the stem of a file in topologies/.")
@click.option("-e", "--environment", "env", help="Environment of config.json (envs.NAME).")
@click.option("--engine", type=click.Choice(["storm", "heron"]), default="heron", show_default=True,
              help="heron: Heron's architecture, one process per task, with an embedded local "
                   "state manager. storm: Storm's model in one process (the reference).")
@click.option("-t", "--time", "time_limit", type=float, default=0, show_default=True,
              help="Stop after SECS seconds; 0 runs until the spouts are exhausted or Ctrl-C.")
@click.option("-o", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Topology option (YAML value), highest precedence. Repeatable.")
@click.option("-a", "--ackers", type=int, help="Sets topology.acker.executors.")
@click.option("-w", "--workers", type=int, help="Sets topology.workers.")
@click.option("-d", "--debug", is_flag=True,
              help="Sets topology.debug=true (DEBUG component logs).")
@click.option("--config", "config_file", type=click.Path(path_type=Path),
              help="Config file to use instead of the project's config.json / heron.yaml.")
@click.option("--log-dir", type=click.Path(path_type=Path),
              help="Where per-task logs go (default: PROJECT/logs).")
@click.option("--capture", type=click.Path(path_type=Path),
              help="Write every tuple emitted on a leaf stream to this JSON-lines file.")
@click.option("--multilang", is_flag=True,
              help="Run Python components as subprocesses over Storm's multi-lang protocol.")
@click.option("--filter", "filter_file", type=click.Path(path_type=Path),
              help="Flux file: Java properties file whose values replace ${key} placeholders.")
@click.option("--env-filter", is_flag=True,
              help="Flux file: replace ${ENV-NAME} placeholders with environment variables.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--traceback", "show_traceback", is_flag=True, help="Show tracebacks of errors.")
def run_command(project: Path, name: str | None, env: str | None, engine: str, time_limit: float,
                options: tuple[str, ...], ackers: int | None, workers: int | None, debug: bool,
                config_file: Path | None, log_dir: Path | None, capture: Path | None,
                multilang: bool, filter_file: Path | None, env_filter: bool, as_json: bool,
                show_traceback: bool) -> None:
    """Run PROJECT (a streamparse project directory, a topology file, or a Storm Flux
    TOPOLOGY.yaml) in the foreground; or, as Heron's CLI, a heronpy FILE.pex|FILE.py
    followed by `- [ARGS]` (its main writes the topology) or `module.ClassName [NAME]`.

    Like `sparse run`: -n picks topologies/NAME.py, -e the environment, and options merge
    env options < Topology.config < -o. A Flux file takes --filter FILE.properties and
    --env-filter, as `storm jar ... flux` does (docs/flux.md). A live status line shows
    per-component counts; a summary prints at the end.
    """
    from engine.tools.cli.run import run_foreground  # deferred: CLI start-up time

    form = main_form()
    restore = _configure_logging()
    definitions: Path | None = None
    try:
        if project.suffix in (".py", ".pex") and not project.exists():
            raise ProjectError(f"{project}: no such topology file")
        if _heronpy_submission(project, form):
            # Heron's form: the main writes the definition, which is what runs
            from engine.tools.cli.heronpy_files import write_definition

            definitions = Path(tempfile.mkdtemp(prefix="heronpy-run-"))
            log_dir = log_dir or project.resolve().parent / "logs"
            project = write_definition(project, form, definitions,
                                       show_traceback=show_traceback)
        code = run_foreground(project=project, name=name, env=env, engine=engine,
                              time_limit=time_limit, options=options, ackers=ackers,
                              workers=workers, debug=debug, config_file=config_file,
                              log_dir=log_dir, capture=capture, multilang=multilang,
                              as_json=as_json, filter_file=filter_file,
                              env_filter=env_filter)
    except cli_errors.USER_ERRORS as exc:
        _fail(exc, 2, show_traceback)
    except cli_errors.RUN_ERRORS as exc:
        _fail(exc, 1, show_traceback)
    finally:
        restore()
        if definitions is not None:
            shutil.rmtree(definitions, ignore_errors=True)
    sys.exit(code)


def _heronpy_submission(project: Path, form: object) -> bool:
    return form is not None or project.suffix == ".pex"


def _configure_logging() -> Callable[[], None]:
    """Engine log lines through rich on stderr for the command's duration; returns the
    function that puts the previous setup back (the CLI also runs inside other programs
    and test processes, whose logging must not be left pointing at a closed stream)."""
    handler = RichHandler(show_path=False, show_time=False, markup=False,
                          console=make_console(stderr=True))
    engine_log = logging.getLogger("heron")
    saved = (list(engine_log.handlers), engine_log.level, engine_log.propagate)
    engine_log.handlers[:] = [handler]
    engine_log.setLevel(logging.INFO)
    engine_log.propagate = False

    def restore() -> None:
        engine_log.handlers[:], level, engine_log.propagate = saved[0], saved[1], saved[2]
        engine_log.setLevel(level)
    return restore


def _fail(exc: BaseException, code: int, show_traceback: bool) -> None:
    if show_traceback:
        traceback.print_exception(exc)
    click.echo(f"heron: error: {cli_errors.one_line(exc)}", err=True)
    sys.exit(code)
