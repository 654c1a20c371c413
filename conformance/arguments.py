"""The ``heron-conformance`` command line's arguments, checked and turned into what the
runner takes: the engines, the report directory (emptied only when it holds an earlier
report), the comparison (``--stream``, ``--ignore-column``, ``--per-key``), the
topology options, and the command line that reruns one engine's run.

A bad combination raises ``UsageProblem``, which the commands print as one line and exit
2 with (``conformance.harness.guard``).
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compat.storm_api.project import ProjectError, parse_cli_options
from conformance.catalogue import Case
from conformance.engines import ENGINES
from conformance.model import Comparison

REPORT_MARKERS = ("results.json", "index.html", "junit.xml")


class UsageProblem(Exception):
    """Arguments that do not fit together; printed as one line, exit 2."""


def parse_engines(value: str) -> list[str]:
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


def prepare_report_dir(path: Path) -> Path:
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


def parse_comparison(streams: Sequence[str], ignore: Sequence[int], per_key: str | None,
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
                      # reduce was checked against the four names above
                      value_column=value, reduce=reduce,  # type: ignore[arg-type]
                      ignore_columns=tuple(ignore), float_digits=float_digits)


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    try:
        return parse_cli_options(list(pairs))
    except ProjectError as exc:
        raise UsageProblem(str(exc)) from None


def user_command(case: Case, engine: str, injected: bool) -> str:
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
