"""What a ``heron-conformance`` command shows on the terminal: live progress while the
runs go (``RichProgress``), then the summary table and the reasons behind every failure,
error and skip, or the results as JSON on stdout (``finish``).

Kept apart from the commands (``conformance.cli``) so the layout of what people read is
in one place, and from the runner, which only calls the progress object's hooks.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
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

from conformance.model import CaseResult, SuiteResult, Verdict

VERDICT_STYLE = {Verdict.PASS: "green", Verdict.FAIL: "bold red", Verdict.ERROR: "bold magenta",
                 Verdict.SKIPPED: "yellow", Verdict.KNOWN_FAILURE: "cyan"}


def stderr_console() -> Console:
    # a log (CI) gets the whole summary table rather than one cut to 80 columns
    return Console(stderr=True, width=None if sys.stderr.isatty() else 160)


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


def finish(console: Console, suite: SuiteResult, report: dict[str, Path], as_json: bool) -> int:
    """Print the results (JSON on stdout when asked, the summary on stderr); the exit code."""
    if as_json:
        click.echo(json.dumps({"exit_code": suite.exit_code(),
                               "report": {k: str(v) for k, v in report.items()},
                               "results": suite.to_json()}, indent=2, default=str))
    print_summary(console, suite, report)
    return suite.exit_code()
