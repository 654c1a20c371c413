"""``heron-conformance``: prove two engines (or a project and its migrated copy) give
the same results, and write a report people can trust.

- ``heron-conformance run`` runs the built-in catalogue on ``storm`` and ``heron``;
- ``heron-conformance run --topology PROJECT [-n NAME] (--input FIXTURE.jsonl |
  --max-tuples N)`` does the same for the user's own topology;
- ``heron-conformance migrate PROJECT`` runs a streamparse project unchanged and its
  ``heron-migrate``d copy, and compares them;
- ``heron-conformance list`` lists the catalogue.

Each run writes a report directory: ``index.html`` (self-contained), ``results.json``
and ``junit.xml``, beside the captures (``captures/``) and engine logs (``work/``).

Exit codes: 0 everything passed (skipped cases allowed); 1 a conformance failure; 2 a
harness error (a run that could not start or did not end in time, bad arguments).

This module holds the commands and their options; what they share lives beside it:
``conformance.arguments`` (checking the arguments), ``conformance.harness`` (logging,
Spark, running the suite, one-line errors) and ``conformance.terminal`` (progress and the
summary).
"""

from __future__ import annotations

import platform
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from compat.summingbird.testing import CATALOGUE as JOBS
from compat.summingbird.testing import CatalogueJob
from conformance.arguments import (
    UsageProblem,
    parse_comparison,
    parse_engines,
    parse_options,
    prepare_report_dir,
    user_command,
)
from conformance.catalogue import CATALOGUE, HERONPY_CASES, Case, Kill, select_cases
from conformance.catalogue.summingbird import PLATFORMS, PlatformRun, run_summingbird_case
from conformance.engines import EngineAdapter, adapter_for
from conformance.harness import EXIT_OK, execute_suite, guard, logging_to, spark_sessions
from conformance.model import CaseResult, SuiteResult
from conformance.report import write_report
from conformance.runner import migrated_copy, topology_case
from conformance.terminal import RichProgress, finish, stderr_console


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="heron-storm-compat", prog_name="heron-conformance")
def main() -> None:
    """Run the same topologies on two engines (or original vs migrated code), diff the
    outputs on PySpark and write a report. Exit 0 all pass, 1 a conformance failure,
    2 a harness error."""


#: a click command function, as the option decorators take and return it
F = TypeVar("F", bound=Callable[..., Any])


def _common(fn: F) -> F:
    for option in reversed([
        click.option("--report", "report_dir", type=click.Path(path_type=Path),
                     default=Path("conformance-report"), show_default=True,
                     help="Report directory (index.html, results.json, junit.xml, captures)."),
        click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Run everything N times (flaky results show in the summary)."),
        click.option("--spark-master", default="local[2]", show_default=True, metavar="URL",
                     help="Spark master for the diffs; a real cluster works the same."),
        click.option("--time-limit", type=click.FloatRange(min=0.1), default=None,
                     metavar="SECS", help="Time bound per run (default: the case's own; "
                                          "user topologies 120)."),
        click.option("--json", "as_json", is_flag=True,
                     help="Also print the results as JSON on stdout."),
        click.option("--debug", is_flag=True, help="Show tracebacks and engine logs."),
    ]):
        fn = option(fn)
    return fn


def _comparison_options(fn: F) -> F:
    for option in reversed([
        click.option("--stream", "streams", multiple=True, metavar="COMPONENT[/STREAM]",
                     help="Compare only these streams (repeatable; default: every stream, "
                          "with --per-key the topology's result streams)."),
        click.option("--ignore-column", "ignore", multiple=True, type=int, metavar="N",
                     help="Drop value column N (0 is the first) before comparing (task ids, "
                          "timestamps). Repeatable."),
        click.option("--per-key", metavar="KEYS:VALUE[:REDUCE]",
                     help="Compare the final value per key (e.g. 0:1:max for word counts) "
                          "instead of every row."),
        click.option("--float-digits", type=click.IntRange(min=1), default=12,
                     show_default=True, help="Significant digits floats are compared to."),
        click.option("-o", "--option", "options", multiple=True, metavar="KEY=VALUE",
                     help="Topology option (YAML value), as for heron run. Repeatable."),
        click.option("-n", "--name", help="Topology: the stem of a file in topologies/."),
        click.option("-e", "--environment", "env", help="Environment of the project config."),
        click.option("--max-tuples", type=click.IntRange(min=1), metavar="N",
                     help="Keep the topology's own (deterministic) spouts but stop each "
                          "spout task after N emitting next_tuple calls."),
    ]):
        fn = option(fn)
    return fn


@main.command("run")
@click.option("--engines", default="storm,heron", show_default=True,
              help="Comma-separated engines; the first is the reference.")
@click.option("--cases", "pattern", metavar="REGEX",
              help="Run only catalogue cases whose name matches.")
@click.option("--inject-failures", is_flag=True,
              help="Kill a bolt task mid-run in every at-least-once case (judged by the "
                   "class it allows under failure).")
@click.option("--topology", "topology", type=click.Path(exists=True, file_okay=False,
                                                        path_type=Path),
              help="Run your own project's topology instead of the catalogue.")
@click.option("--input", "fixture", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Fixture (JSON lines) replacing the topology's spouts (with --topology).")
@click.option("--kill", "kill_component", metavar="COMPONENT",
              help="With --inject-failures on --topology: the bolt to kill (default: the "
                   "first bolt).")
@click.option("--heronpy", is_flag=True,
              help="Run the heronpy cases instead of the catalogue: each heronpy topology "
                   "beside its heron-migrate --heronpy twin (ENGINE:migrated) on every engine.")
@click.option("--kafka", metavar="HOST:PORT",
              help="A Kafka broker for the cases that read their input from Kafka (each "
                   "fixture goes to a fresh topic); without it they are skipped.")
@_comparison_options
@_common
def run_command(engines: str, pattern: str | None, inject_failures: bool, heronpy: bool,
                kafka: str | None,
                topology: Path | None, fixture: Path | None, kill_component: str | None,
                streams: tuple[str, ...], ignore: tuple[int, ...], per_key: str | None,
                float_digits: int, options: tuple[str, ...], name: str | None,
                env: str | None, max_tuples: int | None, report_dir: Path, repeat: int,
                spark_master: str, time_limit: float | None, as_json: bool,
                debug: bool) -> None:
    """Run the built-in catalogue (or, with --topology, your own topology) on the
    engines and write a report."""

    def body() -> int:
        names = parse_engines(engines)
        user_flags = {"-n": name, "-e": env, "--input": fixture, "--max-tuples": max_tuples,
                      "--kill": kill_component, "-o": options, "--stream": streams,
                      "--ignore-column": ignore, "--per-key": per_key}
        if topology is None:
            given = [flag for flag, value in user_flags.items() if value]
            if given:
                raise UsageProblem(f"{', '.join(given)} only apply with --topology PROJECT")
        elif pattern or heronpy:
            raise UsageProblem(f"{'--cases' if pattern else '--heronpy'} selects catalogue "
                               "cases; it does not apply with --topology")
        if fixture is not None and max_tuples is not None:
            raise UsageProblem("--input and --max-tuples exclude each other: the fixture "
                               "replaces the spouts, --max-tuples bounds them")
        directory = prepare_report_dir(report_dir)
        if topology is None:
            cases = select_cases(pattern, HERONPY_CASES if heronpy else CATALOGUE)
            command_for = None
        else:
            comparison = parse_comparison(streams, ignore, per_key, float_digits)
            cases = [topology_case(topology, name, work_dir=directory / "project",
                                   fixture=fixture, max_tuples=max_tuples,
                                   comparison=comparison, options=parse_options(options), env=env,
                                   inject=Kill(kill_component) if kill_component else None,
                                   time_limit=time_limit or 120.0)]
            command_for = user_command
        adapters = [adapter_for(n) for n in names]
        with logging_to(directory, debug):
            return execute_suite(cases=cases, adapters=adapters, report_dir=directory,
                            repeat=repeat, inject_failures=inject_failures,
                            time_limit=time_limit, spark_master=spark_master,
                            as_json=as_json, command_for=command_for, kafka=kafka)

    guard(debug, body)


def _inside(path: Path, project: Path) -> bool:
    path, project = Path(path).resolve(), Path(project).resolve()
    return path == project or project in path.parents


@main.command("migrate")
@click.argument("project", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--engines", default="storm", show_default=True,
              help="Comma-separated engines; on each, the original runs against the "
                   "migrated copy.")
@click.option("--heronpy", is_flag=True,
              help="PROJECT uses heronpy's API: migrate it with heron-migrate --heronpy "
                   "(to streamparse).")
@_comparison_options
@_common
def migrate_command(project: Path, engines: str, heronpy: bool, streams: tuple[str, ...],
                    ignore: tuple[int, ...], per_key: str | None, float_digits: int,
                    options: tuple[str, ...], name: str | None, env: str | None,
                    max_tuples: int | None, report_dir: Path, repeat: int, spark_master: str,
                    time_limit: float | None, as_json: bool, debug: bool) -> None:
    """Run the streamparse PROJECT unchanged and its heron-migrate'd copy (written into
    the report directory) on the engines, and compare their outputs (--heronpy: a
    heronpy PROJECT and its heron-migrate --heronpy copy)."""

    def body() -> int:
        names = parse_engines(engines)
        directory = prepare_report_dir(report_dir)
        migrated = directory / "migrated"
        if _inside(migrated, project):
            # a report directory inside the project: the copy cannot live in it
            migrated = Path(tempfile.mkdtemp(prefix="heron-conformance-")) / "migrated"
        notes = [f"migrated copy: {migrated}",
                 *migrated_copy(project, migrated, heronpy=heronpy)]
        (directory / "migration.txt").write_text("".join(n + "\n" for n in notes),
                                                 encoding="utf-8")
        comparison = parse_comparison(streams, ignore, per_key, float_digits)
        parsed = parse_options(options)
        limit = time_limit or 120.0
        original = topology_case(project, name, work_dir=directory / "project" / "original",
                                 max_tuples=max_tuples, comparison=comparison,
                                 options=parsed, env=env, time_limit=limit)
        copy = topology_case(migrated, name, work_dir=directory / "project" / "migrated",
                             max_tuples=max_tuples, comparison=comparison, options=parsed,
                             env=env, time_limit=limit)
        case = Case(name=f"migrate-{original.topology}",
                    description=(f"{Path(project).resolve()} unchanged vs its heron-migrate "
                                 f"copy ({len(notes)} migration note(s) in migration.txt)"),
                    project=original.project, topology=original.topology,
                    comparison=comparison, options=parsed, env=env, time_limit=limit,
                    tags=("migrate",))
        adapters: list[EngineAdapter] = []
        pairs: list[tuple[str, str]] = []
        for engine in names:
            adapters.append(adapter_for(engine, label=f"{engine}:original",
                                        project=original.project))
            adapters.append(adapter_for(engine, label=f"{engine}:migrated",
                                        project=copy.project))
            pairs.append((f"{engine}:original", f"{engine}:migrated"))
        with logging_to(directory, debug):
            return execute_suite(cases=[case], adapters=adapters, report_dir=directory,
                            repeat=repeat, inject_failures=False, time_limit=time_limit,
                            spark_master=spark_master, as_json=as_json, pairs=pairs,
                            command_for=user_command)

    guard(debug, body)


@main.command("summingbird")
@click.option("--platforms", default="memory,batch,storm,heron", show_default=True,
              help="Comma-separated platforms, each judged against the job's plain-Python "
                   "oracle (and per-key outputs against the first platform's).")
@click.option("--jobs", "pattern", metavar="REGEX", help="Only jobs whose name matches.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the generated input (the same input on every platform).")
@click.option("--size", type=click.IntRange(min=1), default=40, show_default=True,
              help="Input events per source.")
@click.option("--report", "report_dir", type=click.Path(path_type=Path),
              default=Path("conformance-report"), show_default=True,
              help="Report directory (index.html, results.json, junit.xml).")
@click.option("--spark-master", default="local[2]", show_default=True, metavar="URL",
              help="Spark master for the batch platform and the diffs.")
@click.option("--time-limit", type=click.FloatRange(min=0.1), default=120.0,
              show_default=True, metavar="SECS", help="Time bound per streaming run.")
@click.option("--json", "as_json", is_flag=True, help="Also print the results as JSON on stdout.")
@click.option("--debug", is_flag=True, help="Show tracebacks and engine logs.")
def summingbird_command(platforms: str, pattern: str | None, seed: int, size: int,
                        report_dir: Path, spark_master: str, time_limit: float, as_json: bool,
                        debug: bool) -> None:
    """Run the Summingbird job catalogue on the memory, batch (PySpark) and streaming
    (storm, heron) platforms on one seeded input, and write a report: final stores
    exact, sinks as multisets, sum_by_key outputs per key."""

    def body() -> int:
        names = [n.strip() for n in platforms.split(",") if n.strip()]
        unknown = [n for n in names if n not in PLATFORMS]
        if not names or unknown or len(set(names)) != len(names):
            raise UsageProblem(f"--platforms {platforms!r}: give each of "
                               f"{', '.join(PLATFORMS)} at most once"
                               + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
        try:
            chosen = [job for job in JOBS if pattern is None or re.search(pattern, job.name)]
        except re.error as exc:
            raise UsageProblem(f"--jobs {pattern!r} is not a regular expression: {exc}") from None
        if not chosen:
            raise UsageProblem(f"--jobs {pattern!r} matches no job; jobs: "
                               f"{', '.join(job.name for job in JOBS)}")
        directory = prepare_report_dir(report_dir)
        console = stderr_console()
        command = " ".join(shlex.quote(a) for a in ["heron-conformance", *sys.argv[1:]])
        started = datetime.now(timezone.utc)
        began = time.monotonic()
        results: list[CaseResult] = []
        with logging_to(directory, debug), spark_sessions(spark_master) as spark, \
                RichProgress(console, 1) as progress:
            progress.suite_started(len(chosen) * len(names))
            for job in chosen:
                def finished(run: PlatformRun, job: CatalogueJob = job) -> None:
                    progress.run_finished(job.name, run.platform, 0,
                                          "error" if run.error else "ok", run.elapsed)
                    if run.platform != names[-1]:
                        following = names[names.index(run.platform) + 1]
                        progress.run_started(job.name, following, 0)

                progress.run_started(job.name, names[0], 0)
                results.append(run_summingbird_case(spark(), job, names, seed=seed, size=size,
                                                    time_limit=time_limit, on_run=finished))
            session = spark()
            suite = SuiteResult(started=started.isoformat(timespec="seconds"),
                                elapsed=round(time.monotonic() - began, 3), engines=names,
                                command=command, cases=results,
                                environment={"python": platform.python_version(),
                                             "platform": platform.platform(),
                                             "seed": seed, "size": size,
                                             "spark_master": spark_master,
                                             "spark_version": getattr(session, "version", "")})
            report = write_report(suite, directory)
        return finish(console, suite, report, as_json)

    guard(debug, body)


@main.command("list")
@click.option("--cases", "pattern", metavar="REGEX", help="Only cases whose name matches.")
@click.option("--heronpy", is_flag=True, help="The heronpy cases (run --heronpy) instead.")
def list_command(pattern: str | None, heronpy: bool) -> None:
    """List the built-in cases: name, tags, comparison and what each checks."""

    def body() -> int:
        console = Console()
        table = Table(box=None, header_style="bold")
        for col in ("case", "tags", "compared", "checks"):
            table.add_column(col)
        for case in select_cases(pattern, HERONPY_CASES if heronpy else CATALOGUE):
            table.add_row(case.name, ",".join(case.tags), case.comparison.kind,
                          case.description)
        console.print(table)
        return EXIT_OK

    guard(False, body)


if __name__ == "__main__":  # pragma: no cover
    main()
