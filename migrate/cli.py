"""``heron-migrate``: move a streamparse project onto ``compat.storm_api``.

Modes: default prints a unified diff and writes nothing; ``--check`` only says whether
migration is needed; ``--write`` rewrites files in place (atomically); ``--out-tree DIR``
writes a complete migrated copy and leaves the project untouched.

Exit codes: 0 nothing to do (or, with ``--write``/``--out-tree``, done); 1 changes needed
(diff mode and ``--check``, including ERROR findings that need a person); 2 errors (a file
failed to read, parse or write, a refused ``--out-tree`` or one that could not be copied
completely, which leaves no DIR at all, a bad option).
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Any

import click

from migrate.errors import MigrationError
from migrate.files import atomic_write
from migrate.findings import Level
from migrate.formatter import FormatterFailed, run_formatter
from migrate.out_tree import (
    OutTreeFailed,
    OutTreeRefused,
    check_out_tree,
    write_out_tree,
)
from migrate.project import FileOutcome, Status, migrate_tree
from migrate.report import render_json, render_text, summary
from migrate.rules import HERONPY_RULES, RULES, select_rules

EXIT_OK, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _diff(outcome: FileOutcome, display: str) -> str:
    return "".join(difflib.unified_diff(
        outcome.original.splitlines(keepends=True), outcome.migrated.splitlines(keepends=True),
        fromfile="/dev/null" if outcome.created else f"a/{display}", tofile=f"b/{display}"))


def _display(outcome: FileOutcome, root: Path) -> str:
    base = root if root.is_dir() else root.parent
    return str(outcome.path.relative_to(base))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("path", required=False, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--check", is_flag=True, help="Exit 1 when migration is needed, 0 when not; print no diff."
)
@click.option("--write", is_flag=True, help="Rewrite files in place.")
@click.option("--out-tree", "out_tree", type=click.Path(file_okay=False, path_type=Path),
              help="Write a complete migrated copy of the project to DIR (must not exist).")
@click.option("--list-rules", is_flag=True, help="List the rule ids and what they do.")
@click.option("--only", default="", metavar="RULE,...", help="Run only these rules.")
@click.option("--skip", default="", metavar="RULE,...", help="Do not run these rules.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a text report (summary, findings, manual actions) to FILE.")
@click.option("--report-json", "report_json", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the same report as JSON to FILE.")
@click.option("--unsafe", is_flag=True,
              help="Also apply rewrites that change behaviour (always reported as such).")
@click.option(
    "--format",
    "format_cmd",
    metavar="CMD",
    help="Pipe each changed Python file through CMD (stdin to stdout), e.g. 'black -q -'.",
)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Migrate files in N worker processes, with a progress bar on a terminal.")
@click.option(
    "--filter",
    "filter_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="FILE.properties",
    help="Flux files: substitute ${...} from these Java properties, as storm jar --filter does.",
)
@click.option("--heronpy", is_flag=True,
              help="Move a heronpy topology (heronpy.api) to the Storm API (streamparse) "
                   "instead; --list-rules, --only and --skip then name the heronpy rules.")
@click.option("--debug", is_flag=True, help="Show tracebacks of internal failures.")
def command(path: Path | None, check: bool, write: bool, out_tree: Path | None,
            list_rules: bool, only: str, skip: str, report_file: Path | None,
            report_json: Path | None, unsafe: bool, format_cmd: str | None, jobs: int,
            filter_file: Path | None, heronpy: bool, debug: bool) -> None:
    """Migrate the streamparse project or file at PATH to compat.storm_api (with
    --heronpy: the heronpy project or file at PATH to streamparse)."""
    if list_rules:
        for rule_id, rule in (HERONPY_RULES if heronpy else RULES).items():
            click.echo(f"{rule_id}\t{rule.DESCRIPTION}")
        sys.exit(EXIT_OK)
    if path is None:
        raise click.UsageError("PATH is required")
    if sum((check, write, out_tree is not None)) > 1:
        raise click.UsageError("--check, --write and --out-tree are exclusive")
    try:
        rules = select_rules(_split(only), _split(skip), heronpy=heronpy)
    except MigrationError as exc:
        raise click.UsageError(str(exc)) from exc
    if out_tree is not None:
        try:
            check_out_tree(path, out_tree)
        except OutTreeRefused as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_ERROR)
    outcomes = _migrate(path, rules, unsafe, jobs, {"filter_file": filter_file})
    if format_cmd:
        _format(outcomes, path, format_cmd)
    mode = "check" if check else "write" if write else "diff"
    if out_tree is not None:
        mode = "out-tree"
        try:
            write_out_tree(path, out_tree, outcomes)
        except (OutTreeFailed, OSError) as exc:
            _print_failures([o for o in outcomes if o.status is Status.FAILED], debug)
            click.echo(f"error: --out-tree {out_tree} not written: {exc}; nothing was left "
                       f"at {out_tree} and {path} is untouched", err=True)
            sys.exit(EXIT_ERROR)
    code = _report(outcomes, path, mode=mode, out=out_tree, debug=debug)
    try:
        if report_file is not None:
            report_file.write_text(render_text(outcomes, path), encoding="utf-8")
        if report_json is not None:
            report_json.write_text(render_json(outcomes, path), encoding="utf-8")
    except OSError as exc:
        click.echo(f"error: cannot write report: {exc}", err=True)
        code = EXIT_ERROR
    sys.exit(code)


def _format(outcomes: list[FileOutcome], root: Path, command: str) -> None:
    """Run the chosen formatter over changed Python files; a failure fails only that file."""
    for outcome in outcomes:
        if outcome.status is Status.CHANGED and outcome.path.suffix == ".py":
            try:
                outcome.migrated = run_formatter(command, outcome.migrated, _display(outcome, root))
            except FormatterFailed as exc:
                outcome.status, outcome.error = Status.FAILED, str(exc)
            else:
                if outcome.migrated == outcome.original:
                    outcome.status = Status.UNCHANGED


def _migrate(path: Path, rules: list, unsafe: bool, jobs: int,
             options: dict[str, Any]) -> list[FileOutcome]:
    """Run the migration, with a rich progress bar when several jobs run on a terminal."""
    if jobs == 1 or not sys.stderr.isatty():
        return migrate_tree(path, rules, unsafe=unsafe, jobs=jobs, options=options)
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("migrating", total=None)
        return migrate_tree(path, rules, unsafe=unsafe, jobs=jobs, options=options,
                            progress=lambda _outcome: bar.advance(task))


def _report(outcomes: list[FileOutcome], root: Path, *, mode: str, out: Path | None = None,
            debug: bool = False) -> int:
    """Print diffs, findings and failures, write if asked, and return the exit code.

    ``mode`` is ``diff``, ``check``, ``write`` or ``out-tree`` (the copy is already made).
    """
    failed = [o for o in outcomes if o.status is Status.FAILED]
    changed = [o for o in outcomes if o.status is Status.CHANGED]
    manual = [f for o in outcomes for f in o.findings if f.level is not Level.INFO]
    for outcome in list(changed):
        display = _display(outcome, root)
        if mode == "write":
            try:
                atomic_write(outcome.path, outcome.migrated)
            except OSError as exc:
                outcome.status, outcome.error = Status.FAILED, f"{display}: cannot write: {exc}"
                changed.remove(outcome)
                failed.append(outcome)
                continue
            click.echo(f"{'created' if outcome.created else 'rewrote'} {display}", err=True)
        elif mode == "out-tree":
            click.echo(f"migrated {display} -> {(out or root) / display}", err=True)
        elif mode == "check":
            click.echo(f"would rewrite {display}", err=True)
        else:
            click.echo(_diff(outcome, display), nl=False)
    for finding in manual:
        click.echo(finding.headline(), err=True)
        if finding.manual:
            click.echo(f"    to do: {finding.manual}", err=True)
    _print_failures(failed, debug)
    click.echo(_summary_line(outcomes, mode), err=True)
    if failed:
        return EXIT_ERROR
    needs_person = any(f.level is Level.ERROR for f in manual)
    if mode in ("diff", "check") and (changed or needs_person):
        return EXIT_CHANGES
    return EXIT_OK


def _print_failures(failed: list[FileOutcome], debug: bool) -> None:
    """One ``failed:`` line per failed file, with its hint (and traceback with --debug)."""
    for outcome in failed:
        click.echo(f"failed: {outcome.error}", err=True)
        if outcome.hint:
            click.echo(f"    hint: {outcome.hint}", err=True)
        if debug and outcome.detail:
            click.echo(outcome.detail, err=True)


def _summary_line(outcomes: list[FileOutcome], mode: str) -> str:
    """The closing line, counting distinct files (as the report does), new files apart."""
    counts = summary(outcomes)
    done = mode in ("write", "out-tree")
    verb = {"write": "rewritten", "out-tree": "migrated"}.get(mode, "to change")
    return (f"{counts['scanned']} files scanned, {counts['changed']} {verb}, "
            f"{counts['unchanged']} unchanged, {counts['failed']} failed; "
            f"{counts['created']} new files {'created' if done else 'to create'}")


def main() -> None:
    """Console-script entry point."""
    command()


if __name__ == "__main__":
    main()
