"""Rule ``cli``: ``sparse`` commands in shell scripts, Makefiles and fabfile/tasks.py.

Exact equivalents are rewritten in shell scripts and Makefiles: ``sparse run`` becomes
``heron run`` (same options: ``-n -e -t -o -a -w -d --config``), ``sparse kill -n NAME
[--wait S]`` becomes ``heron kill NAME [--wait S]`` and ``sparse list`` becomes ``heron
list``. Everything else (``submit``, whose cluster options differ, ``tail``,
``visualize``, a kill without ``-n`` or with an environment, other options, calls inside
Python strings) is reported with its line for a person to port.
``pre_submit``/``post_submit`` hooks in ``fabfile.py``/``tasks.py`` are reported: nothing
calls them here. The commands are found token by token on each line (these files are
not Python), and Python files are read with libcst, so only string literals are scanned.

Scripts are looked for in the whole project (``scripts/run.sh``, ``bin/deploy``,
``ops/Makefile``), with the walker the Python pass uses, so the same noise (``.git``,
virtual environments, ``node_modules``...) is skipped and symlinks are not followed. A
script is a ``.sh``/``.bash`` file, a Makefile (``Makefile``, ``makefile``,
``GNUmakefile``, ``*.mk``) or a file without a suffix whose shebang names sh, bash, zsh
or dash. ``fabfile.py``/``tasks.py`` are only read at the top: Fabric and Invoke look
for them there, and a ``tasks.py`` deeper down is usually something else (Celery).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import ClassVar

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from migrate.files import iter_project_files
from migrate.findings import Finding, Level
from migrate.outcome import FileOutcome, Status

RUN_OPTIONS = frozenset({"-n", "--name", "-e", "--environment", "-t", "--time", "-o", "--option",
                         "-a", "--ackers", "-w", "--workers", "-d", "--debug", "--config"})
FLAG_OPTIONS = frozenset({"-d", "--debug"})
HOOKS = ("pre_submit", "post_submit")
_SPARSE = re.compile(r"(?<![\w/.-])sparse\s+(?P<sub>[a-z_-]+)(?P<args>[^;&|#\n`)]*)")
SHELL_NAMES = ("Makefile", "makefile", "GNUmakefile")
SCRIPT_SUFFIXES = (".sh", ".bash", ".mk")
SHEBANG_SHELLS = frozenset({"sh", "bash", "zsh", "dash"})
TASK_FILES = ("fabfile.py", "tasks.py")


def _shebang_shell(path: Path) -> bool:
    """True when the first line is a shebang naming sh, bash, zsh or dash, directly
    (``#!/bin/bash``) or through env (``#!/usr/bin/env -S bash -e``). Only the first
    line is read; a file that cannot be read is not taken for a script."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(256)
    except OSError:
        return False
    if not first.startswith(b"#!"):
        return False
    words = first[2:].decode("utf-8", "replace").split()
    if words and Path(words[0]).name == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return bool(words) and Path(words[0]).name in SHEBANG_SHELLS


def is_script(path: Path) -> bool:
    """Whether ``path`` is a shell script or Makefile the rule should read."""
    if path.suffix in SCRIPT_SUFFIXES or path.name in SHELL_NAMES:
        return True
    return path.suffix == "" and _shebang_shell(path)


def _exact_run(args: str) -> bool:
    """True when every option of a ``sparse run`` call exists on ``heron run`` too."""
    try:
        tokens = shlex.split(args)
    except ValueError:
        return False
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name = token.split("=", 1)[0]
        if name not in RUN_OPTIONS:
            return False
        i += 1 if (name in FLAG_OPTIONS or "=" in token) else 2
    return True


def _exact_kill(args: str) -> str | None:
    """``heron kill`` arguments for a ``sparse kill`` call that names its topology and uses
    nothing else but ``--wait``; None when there is no exact equivalent."""
    try:
        tokens = shlex.split(args)
    except ValueError:
        return None
    name, wait = None, None
    i = 0
    while i < len(tokens):
        token = tokens[i]
        option, eq, inline = token.partition("=")
        value = inline if eq else (tokens[i + 1] if i + 1 < len(tokens) else None)
        if option in ("-n", "--name") and value:
            name = value
        elif option == "--wait" and value:
            wait = value
        else:
            return None
        i += 1 if eq else 2
    if name is None:
        return None
    return shlex.quote(name) + (f" --wait {shlex.quote(wait)}" if wait else "")


def _does_nothing(func: cst.FunctionDef) -> bool:
    """True for the quickstart's hooks: only a docstring and ``pass``."""
    body = func.body.body if isinstance(func.body, cst.IndentedBlock) else [func.body]
    for statement in body:
        small = statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]
        for item in small:
            if isinstance(item, cst.Pass):
                continue
            if isinstance(item, cst.Expr) and isinstance(item.value, (cst.SimpleString,
                                                                      cst.ConcatenatedString)):
                continue
            return False
    return True


class SparseCommandsRule:
    """Rewrite exact ``sparse run`` calls to ``heron run``; report the other sparse calls."""

    RULE_ID: ClassVar[str] = "cli"
    DESCRIPTION: ClassVar[str] = ("sparse run becomes heron run in scripts/Makefiles; other sparse "
                                  "commands and submit hooks reported.")

    def apply(self, root: Path) -> list[FileOutcome]:
        """Outcomes for the scripts and task files that call sparse or define hooks.

        Only regular files are read: a symlink is not followed (as in the Python pass) and
        a named pipe would block the read.
        """
        if not root.is_dir():
            return []
        outcomes = []
        for path in iter_project_files(root):
            if path.is_symlink():
                if path.suffix in SCRIPT_SUFFIXES or path.name in SHELL_NAMES:
                    outcomes.append(self._linked_script(path, root))
                continue
            if not path.is_file():
                continue
            if path.name in TASK_FILES and path.parent == root:
                outcomes.append(self._python(path, root))
            elif path.suffix != ".py" and is_script(path):
                outcomes.append(self._script(path, root))
        return [o for o in outcomes if o.findings or o.status is not Status.UNCHANGED]

    def _linked_script(self, path: Path, root: Path) -> FileOutcome:
        """A symlinked script is not read (its target may be outside the project, and
        rewriting it would replace the link): say so, as for symlinked Python files."""
        display = str(path.relative_to(root))
        return FileOutcome(path, Status.UNCHANGED, findings=[self._finding(
            display, 0, 0, Level.WARNING,
            f"symlinked script not followed: {display} -> {os.readlink(path)}; sparse "
            "commands in it are not migrated", "", "",
            manual="check the file it points to for sparse commands and migrate it "
                   "separately")])

    def _script(self, path: Path, root: Path) -> FileOutcome:
        display = str(path.relative_to(root))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return FileOutcome(path, Status.FAILED, error=f"{display}: cannot read: {exc}")
        findings: list[Finding] = []
        lines = text.splitlines(keepends=True)
        for number, line in enumerate(lines, start=1):
            def swap(match: re.Match[str], number: int = number) -> str:
                old = match.group(0).rstrip()
                if match["sub"] == "run" and _exact_run(match["args"]):
                    new = "heron run" + match.group(0)[len(match.group(0)) - len(match["args"]):]
                    findings.append(self._finding(display, number, match.start() + 1, Level.INFO,
                                                  "sparse run became heron run", old, new.rstrip()))
                    return new
                kill = _exact_kill(match["args"]) if match["sub"] == "kill" else None
                if kill is not None:
                    trailing = match["args"][len(match["args"].rstrip()):]
                    new = f"heron kill {kill}{trailing}"
                    findings.append(
                        self._finding(
                            display,
                            number,
                            match.start() + 1,
                            Level.INFO,
                            "sparse kill became heron kill",
                            old,
                            new.rstrip(),
                        )
                    )
                    return new
                if match["sub"] == "list" and not match["args"].strip():
                    new = "heron list" + match["args"]
                    findings.append(
                        self._finding(
                            display,
                            number,
                            match.start() + 1,
                            Level.INFO,
                            "sparse list became heron list",
                            old,
                            "heron list",
                        )
                    )
                    return new
                findings.append(self._finding(
                    display, number, match.start() + 1, Level.WARNING,
                    f"sparse {match['sub']} has no exact heron equivalent", old, "",
                    "port by hand: heron run for local runs, heron submit local PROJECT -n NAME "
                    "for background runs, heron kill NAME, heron list"))
                return match.group(0)
            lines[number - 1] = _SPARSE.sub(swap, line)
        new_text = "".join(lines)
        status = Status.CHANGED if new_text != text else Status.UNCHANGED
        return FileOutcome(path, status, text, new_text, findings)

    def _python(self, path: Path, root: Path) -> FileOutcome:
        display = str(path.relative_to(root))
        try:
            text = path.read_text(encoding="utf-8")
            wrapper = MetadataWrapper(cst.parse_module(text))
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError) as exc:
            return FileOutcome(path, Status.FAILED, error=f"{display}: cannot read or parse: {exc}")
        positions = wrapper.resolve(PositionProvider)
        findings: list[Finding] = []
        rule = self

        class Scan(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                if node.name.value in HOOKS:
                    pos = positions[node].start
                    level, manual = (Level.WARNING, "run its work before/after submitting yourself")
                    if _does_nothing(node):
                        level, manual = Level.INFO, ""
                    findings.append(rule._finding(
                        display, pos.line, pos.column + 1, level,
                        f"{node.name.value} hook is not called here", f"def {node.name.value}(...)",
                        "", manual))

            def visit_SimpleString(self, node: cst.SimpleString) -> None:
                for match in _SPARSE.finditer(node.value):
                    pos = positions[node].start
                    findings.append(
                        rule._finding(
                            display,
                            pos.line,
                            pos.column + 1,
                            Level.WARNING,
                            f"sparse {match['sub']} called from Python",
                            match.group(0).strip(),
                            "",
                            "replace with heron run (sparse run's options are the same) "
                            "or port by hand",
                        )
                    )

        wrapper.visit(Scan())
        return FileOutcome(path, Status.UNCHANGED, text, text, findings)

    def _finding(self, path: str, line: int, col: int, level: Level, message: str, old: str,
                 new: str, manual: str = "") -> Finding:
        return Finding(path=path, line=line, col=col, level=level, rule_id=self.RULE_ID,
                       message=message, old=old, new=new, manual=manual)
