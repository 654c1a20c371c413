"""Run the selected rules over one source text: parse, transform, re-parse the output.

No file I/O here, so the guarantees (unparseable input never transformed, output always
re-parsed) are testable on strings.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.codemod import CodemodContext, SkipFile

from migrate.errors import OutputInvalid, RuleCrashed, SourceUnparseable
from migrate.findings import Finding
from migrate.py2 import python2_hint
from migrate.rules.base import Rule


@dataclass
class Transformed:
    """The migrated text and what the rules found while producing it."""

    code: str
    findings: list[Finding] = field(default_factory=list)


def parse(code: str, path: str) -> cst.Module:
    """Parse ``code`` or raise :class:`SourceUnparseable` with location and a Python 2 hint."""
    try:
        return cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        raise SourceUnparseable(f"{path}:{exc.raw_line}:{exc.raw_column + 1}: does not parse: "
                                f"{exc.message}", exc.raw_line, exc.raw_column + 1,
                                python2_hint(code)) from exc


def _line(line: int, lines: dict[int, int] | None) -> int:
    """``line`` of the current tree as a line of the input: its own entry, else the
    nearest mapped line above it, shifted by the distance."""
    if not lines or line <= 0:
        return line
    if line in lines:
        return lines[line]
    above = [n for n in lines if n < line]
    return lines[max(above)] + line - max(above) if above else line


def _remapped(findings: list[Finding], lines: dict[int, int] | None) -> list[Finding]:
    if not lines:
        return findings
    return [replace(f, line=_line(f.line, lines)) for f in findings]


def transform_source(code: str, path: str, rules: Sequence[type[Rule]],
                     unsafe: bool = False) -> Transformed:
    """Apply ``rules`` in order to ``code``; the result is guaranteed to parse."""
    tree = parse(code, path)
    findings: list[Finding] = []
    selected = frozenset(rule_cls.RULE_ID for rule_cls in rules)
    # new line -> line of ``code``, once a rule moved code (heronpy-builder turns a main
    # into a class): what later rules find is reported where it was written
    lines: dict[int, int] | None = None
    for rule_cls in rules:
        rule = rule_cls(CodemodContext(filename=path), unsafe=unsafe, selected=selected)
        try:
            tree = rule.transform_module(tree)
        except SkipFile:
            continue
        except Exception as exc:  # a rule bug must fail this file, not the whole run
            raise RuleCrashed(f"{path}: rule {rule_cls.RULE_ID} crashed: {exc!r}; file left "
                              "unchanged, please report this (--debug shows the traceback)",
                              traceback.format_exc()) from exc
        findings.extend(_remapped(rule.findings, lines))
        moved = getattr(rule, "line_map", None)
        if moved:
            lines = {new: _line(old, lines) for new, old in moved.items()}
    new_code = tree.code
    if new_code != code:
        try:
            cst.parse_module(new_code)
            compile(new_code, path, "exec", dont_inherit=True)
        except (cst.ParserSyntaxError, SyntaxError) as exc:
            raise OutputInvalid(f"{path}: migrated code does not parse ({exc}); "
                                "file left unchanged, please report this") from exc
    return Transformed(new_code, findings)
