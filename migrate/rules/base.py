"""The base every migration rule builds on: a libcst codemod command that records findings."""

from __future__ import annotations

from collections.abc import Collection
from typing import ClassVar

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand
from libcst.metadata import PositionProvider, ProviderT

from migrate.findings import Finding, Level


class Rule(VisitorBasedCodemodCommand):
    """One migration rule: an id, a one-line DESCRIPTION, and findings located in the source.

    Findings are kept on the instance, not in ``context.scratch`` (libcst does not reset
    scratch between files), so one instance serves exactly one file.
    """

    RULE_ID: ClassVar[str] = ""
    DESCRIPTION: str = ""  # libcst's CodemodCommand declares it as an instance attribute
    METADATA_DEPENDENCIES: ClassVar[Collection[ProviderT]] = (PositionProvider,)

    def __init__(self, context: CodemodContext, unsafe: bool = False,
                 selected: frozenset[str] | None = None) -> None:
        super().__init__(context)
        self.findings: list[Finding] = []
        self.unsafe = unsafe  # semantics-changing rewrites only when asked (--unsafe)
        # The ids of the rules this migration runs (None: this rule alone, as in a unit
        # test), so a rule can leave to another what that one reports better.
        self.selected = selected

    @staticmethod
    def code_of(node: cst.CSTNode) -> str:
        """Source text of a node, for the old/new columns of a finding."""
        return cst.Module(body=[]).code_for_node(node).strip()

    def record(self, node: cst.CSTNode, level: Level, message: str, *, old: str = "",
               new: str = "", manual: str = "") -> None:
        """Add a finding at ``node`` (an original node: only those carry positions)."""
        pos = self.get_metadata(PositionProvider, node, None)
        line, col = (pos.start.line, pos.start.column + 1) if pos else (0, 0)
        self.findings.append(Finding(
            path=self.context.filename or "<string>", line=line, col=col, level=level,
            rule_id=self.RULE_ID, message=message, old=old, new=new, manual=manual))
        if level is not Level.INFO:
            self.warn(f"{level.value}: {message}")
