"""What every ``heron-conformance`` command does around its own work: engine and
harness logs go to the report directory's ``conformance.log`` (not over the progress
display), a Spark session is started on first use for the diffs and stopped at the end,
the runner runs the cases and the report is written (``execute_suite``), and a problem
of the harness (not of the engines) becomes one line on stderr and exit code 2
(``guard``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from compat.spark_session import spark_session
from conformance.arguments import UsageProblem
from conformance.catalogue import Case, CaseError
from conformance.engines import EngineAdapter, HarnessError
from conformance.report import write_report
from conformance.runner import Runner
from conformance.terminal import RichProgress, finish, stderr_console

if TYPE_CHECKING:  # types only: pyspark is optional and slow to import
    from pyspark.sql import SparkSession

EXIT_OK, EXIT_FAIL, EXIT_HARNESS = 0, 1, 2

log = logging.getLogger("heron.conformance")


@contextlib.contextmanager
def logging_to(report_dir: Path, debug: bool) -> Iterator[None]:
    """Engine and harness log lines (the ``heron`` loggers) go to ``conformance.log`` in
    the report directory, not over the progress display; ``--debug`` also shows them on
    stderr. The loggers are restored afterwards."""
    logger = logging.getLogger("heron")
    saved = (list(logger.handlers), logger.propagate, logger.level)
    handler = logging.FileHandler(report_dir / "conformance.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handlers: list[logging.Handler] = [handler]
    if debug:
        handlers.append(logging.StreamHandler(sys.stderr))
    logger.handlers[:] = handlers
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.handlers[:], logger.propagate = saved[0], saved[1]
        logger.setLevel(saved[2])
        handler.close()


def execute_suite(*, cases: list[Case], adapters: list[EngineAdapter], report_dir: Path,
             repeat: int, inject_failures: bool, time_limit: float | None, spark_master: str,
             as_json: bool, pairs: list[tuple[str, str]] | None = None,
             command_for: Callable[[Case, str, bool], str] | None = None,
             kafka: str | None = None) -> int:
    """Run, write the report, print the summary; returns the exit code."""
    console = stderr_console()
    command = " ".join(shlex.quote(a) for a in ["heron-conformance", *sys.argv[1:]])
    with spark_sessions(spark_master) as spark:
        with RichProgress(console, repeat) as progress:
            runner = Runner(adapters, spark=spark, report_dir=report_dir, repeat=repeat,
                            inject_failures=inject_failures, time_limit=time_limit,
                            progress=progress, pairs=pairs, command=command,
                            command_for=command_for, kafka=kafka)
            suite = runner.run(cases)
        suite.environment["spark_master"] = spark_master
        report = write_report(suite, report_dir)
    return finish(console, suite, report, as_json)


@contextlib.contextmanager
def spark_sessions(spark_master: str) -> Iterator[Callable[[], SparkSession]]:
    """A function returning the Spark session for the diffs, started on first use.

    A session this process already runs (an embedding program, tests) is used and left
    running; one started here is stopped at the end."""
    started: list[SparkSession] = []

    def spark() -> SparkSession:
        from pyspark.sql import SparkSession  # deferred: pyspark is optional and slow to import

        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        if SparkSession.getActiveSession() is not None:
            return spark_session(spark_master, app_name="heron-conformance")
        session = spark_session(spark_master, app_name="heron-conformance")
        started.append(session)
        return session

    try:
        yield spark
    finally:
        for session in started:
            try:
                session.stop()
            except Exception as exc:  # the report is written; a stuck JVM is no failure
                log.warning("stopping Spark failed: %s", exc)


def guard(debug: bool, body: Callable[[], int]) -> None:
    """Run a command body; harness problems become one line and exit 2."""
    try:
        code = body()
    except click.exceptions.Exit:
        raise
    except (UsageProblem, CaseError, HarnessError, ValueError, OSError) as exc:
        if debug:
            traceback.print_exception(exc)
        click.echo(f"heron-conformance: error: {_one_line(exc)}", err=True)
        sys.exit(EXIT_HARNESS)
    except KeyboardInterrupt:
        click.echo("heron-conformance: interrupted", err=True)
        sys.exit(EXIT_HARNESS)
    except Exception as exc:  # Spark missing, a project that does not load...
        if debug:
            traceback.print_exception(exc)
        click.echo(f"heron-conformance: error: {type(exc).__name__}: {_one_line(exc)}",
                   err=True)
        sys.exit(EXIT_HARNESS)
    sys.exit(code)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())
