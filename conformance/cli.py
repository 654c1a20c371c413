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
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import re
import shlex
import shutil
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from conformance.catalogue import CATALOGUE, Case, CaseError, Kill, select_cases
from conformance.engines import ENGINES, EngineAdapter, HarnessError, adapter_for
from conformance.model import CaseResult, Comparison, SuiteResult, Verdict
from conformance.runner import Runner, migrated_copy, topology_case

EXIT_OK, EXIT_FAIL, EXIT_HARNESS = 0, 1, 2
REPORT_MARKERS = ("results.json", "index.html", "junit.xml")
VERDICT_STYLE = {Verdict.PASS: "green", Verdict.FAIL: "bold red", Verdict.ERROR: "bold magenta",
                 Verdict.SKIPPED: "yellow", Verdict.KNOWN_FAILURE: "cyan"}

log = logging.getLogger("heron.conformance")


class UsageProblem(Exception):
    """Arguments that do not fit together; printed as one line, exit 2."""


# -- progress ---------------------------------------------------------------------------------
class RichProgress:
    """Live progress on stderr: the run under way (case, engine, elapsed) over a bar of
    all runs."""

    def __init__(self, console: Console, repeat: int) -> None:
        self.console = console
        self.repeat = repeat
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                 BarColumn(bar_width=24), TextColumn("{task.fields[count]}"),
                                 TimeElapsedColumn(), console=console, transient=True)
        self.total: TaskID | None = None
        self.current: TaskID | None = None

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def suite_started(self, total_runs: int) -> None:
        self.total = self.progress.add_task("all runs", total=total_runs,
                                            count=f"0/{total_runs}")
        self.current = self.progress.add_task("", total=None, count="")

    def run_started(self, label: str, engine: str, repeat: int) -> None:
        where = f"[{repeat + 1}/{self.repeat}] " if self.repeat > 1 else ""
        assert self.current is not None
        self.progress.reset(self.current, description=f"{where}{label} on {engine}")

    def run_finished(self, label: str, engine: str, repeat: int, outcome: str,
                     elapsed: float) -> None:
        assert self.total is not None
        self.progress.advance(self.total)
        task = self.progress.tasks[self.total]
        self.progress.update(self.total, count=f"{int(task.completed)}/{int(task.total or 0)}")
        if outcome == "error":
            self.progress.console.print(Text(f"  {label} on {engine}: error after "
                                             f"{elapsed:.1f}s", style="magenta"))

    def comparing(self, case: str, repeat: int) -> None:
        assert self.current is not None
        where = f"[{repeat + 1}/{self.repeat}] " if self.repeat > 1 else ""
        self.progress.reset(self.current, description=f"{where}comparing {case} (Spark)")

    def spark_progress(self, line: str) -> None:
        """Spark's stage progress while a diff runs (from the status tracker)."""
        if self.current is not None:
            description = self.progress.tasks[self.current].description.split(" · ")[0]
            self.progress.update(self.current, description=f"{description} · {line}")

    def case_finished(self, result: CaseResult) -> None:
        pass


# -- summary ------------------------------------------------------------------------------------
def _cell(results: list[Any]) -> Text:
    """One verdict, or how the repeats split (flakiness)."""
    verdicts = Counter(r.verdict for r in results)
    if len(verdicts) == 1:
        verdict = next(iter(verdicts))
        text = Text(verdict.value, style=VERDICT_STYLE[verdict])
        diff = getattr(results[0], "diff", None)
        if diff is not None and verdict in (Verdict.PASS, Verdict.FAIL):
            text.append(f" {diff.observed.value}", style="dim")
        if len(results) > 1:
            text.append(f" ×{len(results)}", style="dim")
        return text
    text = Text("flaky ", style="bold red")
    text.append(", ".join(f"{v.value} {n}/{len(results)}" for v, n in verdicts.most_common()))
    return text


def summary_table(suite: SuiteResult) -> Table:
    """One row per case (repeats folded), a column per engine and per engine pair."""
    pair_names: list[str] = []
    for case in suite.cases:
        for p in case.pairs:
            if f"{p.left} vs {p.right}" not in pair_names:
                pair_names.append(f"{p.left} vs {p.right}")
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("case", no_wrap=True)
    for engine in suite.engines:
        table.add_column(engine, no_wrap=True)
    for name in pair_names:
        table.add_column(name, no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    by_case: dict[str, list[CaseResult]] = {}
    for case in suite.cases:
        by_case.setdefault(case.case, []).append(case)
    for name, results in by_case.items():
        row: list[Any] = [name]
        for engine in suite.engines:
            runs = [r for c in results for r in c.runs if r.engine == engine]
            row.append(_cell(runs) if runs else Text("-"))
        for pair in pair_names:
            pairs = [p for c in results for p in c.pairs if f"{p.left} vs {p.right}" == pair]
            row.append(_cell(pairs) if pairs else Text("-"))
        row.append(_cell([_Overall(c.verdict) for c in results]))
        table.add_row(*row)
    return table


class _Overall:
    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        self.diff = None


def _problems(suite: SuiteResult, limit: int = 8) -> list[Text]:
    """Why runs failed or errored (one line each), then each distinct skip reason once."""
    lines: list[Text] = []
    skips: dict[str, list[str]] = {}
    for case in suite.cases:
        items = [(r.engine, r.verdict, r.reason) for r in case.runs]
        items += [(f"{p.left} vs {p.right}", p.verdict, p.reason) for p in case.pairs]
        for who, verdict, reason in items:
            first = reason.strip().splitlines()[0] if reason.strip() else ""
            if verdict is Verdict.SKIPPED:
                if " vs " not in who:
                    skips.setdefault(f"{who}: {first}", []).append(case.case)
            elif verdict is not Verdict.PASS:
                lines.append(Text(f"{verdict.value}: {case.case} on {who}: {first}",
                                  style=VERDICT_STYLE[verdict]))
    if len(lines) > limit:
        lines = lines[:limit] + [Text(f"... and {len(lines) - limit} more in the report")]
    for why, cases in skips.items():
        names = sorted(set(cases))
        lines.append(Text(f"skipped on {why} ({len(names)} case(s): {', '.join(names)})",
                          style=VERDICT_STYLE[Verdict.SKIPPED]))
    return lines


def print_summary(console: Console, suite: SuiteResult, report: dict[str, Path] | None) -> None:
    console.print(summary_table(suite))
    counts = Counter(c.verdict for c in suite.cases)
    total = len(suite.cases)
    parts = [f"{counts.get(v, 0)} {v.value}" for v in
             (Verdict.PASS, Verdict.FAIL, Verdict.ERROR, Verdict.SKIPPED, Verdict.KNOWN_FAILURE)
             if counts.get(v)]
    console.print(Text(f"{total} case run(s): {', '.join(parts) or 'none'} in "
                       f"{suite.elapsed:.1f}s", style="bold"), soft_wrap=True)
    for line in _problems(suite):
        console.print(line, soft_wrap=True)
    if report:
        console.print(Text(f"report: {report['html']}"), soft_wrap=True)


# -- shared plumbing ----------------------------------------------------------------------------
def _engines(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise UsageProblem("--engines names no engine")
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        raise UsageProblem(f"--engines: unknown engine(s) {', '.join(unknown)}; "
                           f"engines: {', '.join(ENGINES)}")
    if len(set(names)) != len(names):
        raise UsageProblem(f"--engines names an engine twice: {value}")
    return names


def _prepare_report_dir(path: Path) -> Path:
    """An empty or earlier report directory; a non-empty directory of something else
    is refused (a report run must not delete what it did not write)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageProblem(f"--report {path} is a file; give a directory")
    if path.is_dir() and any(path.iterdir()):
        if not any((path / m).exists() for m in REPORT_MARKERS):
            raise UsageProblem(f"--report {path} is not empty and holds no earlier report; "
                               "choose a new directory")
        for name in ("captures", "work", "project", "migrated", "migration.txt",
                     "conformance.log", *REPORT_MARKERS):
            target = path / name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _comparison(streams: Sequence[str], ignore: Sequence[int], per_key: str | None,
                float_digits: int) -> Comparison:
    pairs = []
    for item in streams:
        component, sep, stream = item.partition("/")
        if not component:
            raise UsageProblem(f"--stream {item!r}: expected COMPONENT[/STREAM]")
        pairs.append((component, stream if sep and stream else "default"))
    if per_key is None:
        return Comparison(kind="rows", streams=tuple(pairs), ignore_columns=tuple(ignore),
                          float_digits=float_digits)
    parts = per_key.split(":")
    if len(parts) not in (2, 3):
        raise UsageProblem(f"--per-key {per_key!r}: expected KEYS:VALUE[:REDUCE], e.g. 0:1:max")
    try:
        keys = tuple(int(k) for k in parts[0].split(",") if k.strip())
        value = int(parts[1])
    except ValueError:
        raise UsageProblem(f"--per-key {per_key!r}: columns are numbers (0 is the first "
                           "value), e.g. 0:1:max") from None
    reduce = parts[2] if len(parts) == 3 else "max"
    if reduce not in ("max", "min", "sum", "last"):
        raise UsageProblem(f"--per-key {per_key!r}: reduce is one of max, min, sum, last")
    if not keys:
        raise UsageProblem(f"--per-key {per_key!r}: name at least one key column")
    return Comparison(kind="per_key", streams=tuple(pairs), key_columns=keys,
                      value_column=value, reduce=reduce,  # type: ignore[arg-type]
                      ignore_columns=tuple(ignore), float_digits=float_digits)


def _options(pairs: Sequence[str]) -> dict[str, Any]:
    from compat.storm_api.project import ProjectError, parse_cli_options

    try:
        return parse_cli_options(list(pairs))
    except ProjectError as exc:
        raise UsageProblem(str(exc)) from None


@contextlib.contextmanager
def _logging_to(report_dir: Path, debug: bool) -> Iterator[None]:
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


def _execute(*, cases: list[Case], adapters: list[EngineAdapter], report_dir: Path,
             repeat: int, inject_failures: bool, time_limit: float | None, spark_master: str,
             as_json: bool, pairs: list[tuple[str, str]] | None = None,
             command_for: Any = None) -> int:
    """Run, write the report, print the summary; returns the exit code."""
    from conformance.report import write_report

    console = _console()
    command = " ".join(shlex.quote(a) for a in ["heron-conformance", *sys.argv[1:]])
    with _spark_sessions(spark_master) as spark:
        with RichProgress(console, repeat) as progress:
            runner = Runner(adapters, spark=spark, report_dir=report_dir, repeat=repeat,
                            inject_failures=inject_failures, time_limit=time_limit,
                            progress=progress, pairs=pairs, command=command,
                            command_for=command_for)
            suite = runner.run(cases)
        suite.environment["spark_master"] = spark_master
        report = write_report(suite, report_dir)
    return _finish(console, suite, report, as_json)


def _console() -> Console:
    # a log (CI) gets the whole summary table rather than one cut to 80 columns
    return Console(stderr=True, width=None if sys.stderr.isatty() else 160)


@contextlib.contextmanager
def _spark_sessions(spark_master: str) -> Iterator[Any]:
    """A function returning the Spark session for the diffs, started on first use.

    A session this process already runs (an embedding program, tests) is used and left
    running; one started here is stopped at the end."""
    from compat.spark_session import spark_session

    started: list[Any] = []

    def spark() -> Any:
        from pyspark.sql import SparkSession

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


def _finish(console: Console, suite: SuiteResult, report: dict[str, Path], as_json: bool) -> int:
    """Print the results (JSON on stdout when asked, the summary on stderr); the exit code."""
    if as_json:
        import json
        click.echo(json.dumps({"exit_code": suite.exit_code(),
                               "report": {k: str(v) for k, v in report.items()},
                               "results": suite.to_json()}, indent=2, default=str))
    print_summary(console, suite, report)
    return suite.exit_code()


def _guard(debug: bool, body: Any) -> None:
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


# -- commands -------------------------------------------------------------------------------------
@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="heron-storm-compat", prog_name="heron-conformance")
def main() -> None:
    """Run the same topologies on two engines (or original vs migrated code), diff the
    outputs on PySpark and write a report. Exit 0 all pass, 1 a conformance failure,
    2 a harness error."""


def _common(fn: Any) -> Any:
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


def _comparison_options(fn: Any) -> Any:
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
@_comparison_options
@_common
def run_command(engines: str, pattern: str | None, inject_failures: bool,
                topology: Path | None, fixture: Path | None, kill_component: str | None,
                streams: tuple[str, ...], ignore: tuple[int, ...], per_key: str | None,
                float_digits: int, options: tuple[str, ...], name: str | None,
                env: str | None, max_tuples: int | None, report_dir: Path, repeat: int,
                spark_master: str, time_limit: float | None, as_json: bool,
                debug: bool) -> None:
    """Run the built-in catalogue (or, with --topology, your own topology) on the
    engines and write a report."""

    def body() -> int:
        names = _engines(engines)
        user_flags = {"-n": name, "-e": env, "--input": fixture, "--max-tuples": max_tuples,
                      "--kill": kill_component, "-o": options, "--stream": streams,
                      "--ignore-column": ignore, "--per-key": per_key}
        if topology is None:
            given = [flag for flag, value in user_flags.items() if value]
            if given:
                raise UsageProblem(f"{', '.join(given)} only apply with --topology PROJECT")
        elif pattern:
            raise UsageProblem("--cases selects catalogue cases; it does not apply with "
                               "--topology")
        if fixture is not None and max_tuples is not None:
            raise UsageProblem("--input and --max-tuples exclude each other: the fixture "
                               "replaces the spouts, --max-tuples bounds them")
        directory = _prepare_report_dir(report_dir)
        if topology is None:
            cases = select_cases(pattern, CATALOGUE)
            command_for = None
        else:
            comparison = _comparison(streams, ignore, per_key, float_digits)
            cases = [topology_case(topology, name, work_dir=directory / "project",
                                   fixture=fixture, max_tuples=max_tuples,
                                   comparison=comparison, options=_options(options), env=env,
                                   inject=Kill(kill_component) if kill_component else None,
                                   time_limit=time_limit or 120.0)]
            command_for = _user_command
        adapters = [adapter_for(n) for n in names]
        with _logging_to(directory, debug):
            return _execute(cases=cases, adapters=adapters, report_dir=directory,
                            repeat=repeat, inject_failures=inject_failures,
                            time_limit=time_limit, spark_master=spark_master,
                            as_json=as_json, command_for=command_for)

    _guard(debug, body)


def _inside(path: Path, project: Path) -> bool:
    path, project = Path(path).resolve(), Path(project).resolve()
    return path == project or project in path.parents


def _user_command(case: Case, engine: str, injected: bool) -> str:
    """The command line that reruns a user topology run on one engine."""
    args = list(sys.argv[1:])
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--engines":
            skip = True
            continue
        if arg.startswith("--engines="):
            continue
        out.append(arg)
    return " ".join(shlex.quote(a) for a in
                    ["heron-conformance", *out, "--engines", engine.split(":")[0]])


@main.command("migrate")
@click.argument("project", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--engines", default="storm", show_default=True,
              help="Comma-separated engines; on each, the original runs against the "
                   "migrated copy.")
@_comparison_options
@_common
def migrate_command(project: Path, engines: str, streams: tuple[str, ...],
                    ignore: tuple[int, ...], per_key: str | None, float_digits: int,
                    options: tuple[str, ...], name: str | None, env: str | None,
                    max_tuples: int | None, report_dir: Path, repeat: int, spark_master: str,
                    time_limit: float | None, as_json: bool, debug: bool) -> None:
    """Run the streamparse PROJECT unchanged and its heron-migrate'd copy (written into
    the report directory) on the engines, and compare their outputs."""

    def body() -> int:
        names = _engines(engines)
        directory = _prepare_report_dir(report_dir)
        migrated = directory / "migrated"
        if _inside(migrated, project):
            # a report directory inside the project: the copy cannot live in it
            import tempfile
            migrated = Path(tempfile.mkdtemp(prefix="heron-conformance-")) / "migrated"
        notes = [f"migrated copy: {migrated}", *migrated_copy(project, migrated)]
        (directory / "migration.txt").write_text("".join(n + "\n" for n in notes),
                                                 encoding="utf-8")
        comparison = _comparison(streams, ignore, per_key, float_digits)
        parsed = _options(options)
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
        with _logging_to(directory, debug):
            return _execute(cases=[case], adapters=adapters, report_dir=directory,
                            repeat=repeat, inject_failures=False, time_limit=time_limit,
                            spark_master=spark_master, as_json=as_json, pairs=pairs,
                            command_for=_user_command)

    _guard(debug, body)


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
        from conformance.catalogue.summingbird import PLATFORMS, run_summingbird_case
        from conformance.report import write_report
        from compat.summingbird.testing import CATALOGUE as JOBS

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
        directory = _prepare_report_dir(report_dir)
        console = _console()
        command = " ".join(shlex.quote(a) for a in ["heron-conformance", *sys.argv[1:]])
        started = datetime.now(timezone.utc)
        began = time.monotonic()
        results: list[CaseResult] = []
        with _logging_to(directory, debug), _spark_sessions(spark_master) as spark, \
                RichProgress(console, 1) as progress:
            progress.suite_started(len(chosen) * len(names))
            for job in chosen:
                def finished(run: Any, job: Any = job) -> None:
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
        return _finish(console, suite, report, as_json)

    _guard(debug, body)


@main.command("list")
@click.option("--cases", "pattern", metavar="REGEX", help="Only cases whose name matches.")
def list_command(pattern: str | None) -> None:
    """List the built-in cases: name, tags, comparison and what each checks."""

    def body() -> int:
        console = Console()
        table = Table(box=None, header_style="bold")
        for col in ("case", "tags", "compared", "checks"):
            table.add_column(col)
        for case in select_cases(pattern, CATALOGUE):
            table.add_row(case.name, ",".join(case.tags), case.comparison.kind,
                          case.description)
        console.print(table)
        return EXIT_OK

    _guard(False, body)


if __name__ == "__main__":  # pragma: no cover
    main()
