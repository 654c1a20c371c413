"""``--format CMD``: pipe migrated Python through a formatter the user chose.

No formatter runs unless asked (libcst's runner defaults to black and fails every changed
file when black is missing). The formatter's output is re-parsed like any other output;
a formatter that fails or breaks the code fails that file, which is then left unchanged.
"""

from __future__ import annotations

import shlex
import subprocess

import libcst as cst

from migrate.errors import MigrationError


class FormatterFailed(MigrationError):
    """The formatter exited non-zero, could not start, or produced code that does not parse."""


def run_formatter(command: str, code: str, display: str, timeout: float = 60.0) -> str:
    """``code`` formatted by ``command`` (reads stdin, writes stdout, e.g. ``black -q -``)."""
    try:
        proc = subprocess.run(shlex.split(command), input=code, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FormatterFailed(f"{display}: --format {command!r} could not run: {exc}") from exc
    if proc.returncode != 0:
        raise FormatterFailed(f"{display}: --format {command!r} exited {proc.returncode}: "
                              f"{proc.stderr.strip()[:200]}")
    try:
        cst.parse_module(proc.stdout)
    except cst.ParserSyntaxError as exc:
        raise FormatterFailed(f"{display}: --format output does not parse: {exc.message}") from exc
    return proc.stdout
