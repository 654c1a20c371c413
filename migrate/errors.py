"""The migration error hierarchy: each names the file (and line) and what to do about it."""

from __future__ import annotations


class MigrationError(Exception):
    """Base of everything ``heron-migrate`` reports as a failure (exit code 2)."""


class UnknownRule(MigrationError):
    """``--only``/``--skip`` named a rule id that does not exist."""


class SourceUnreadable(MigrationError):
    """A file could not be read, or is not UTF-8: it is reported and never touched."""


class SourceUnparseable(MigrationError):
    """A file is not valid Python 3; it is listed as failed and never replaced."""

    def __init__(self, message: str, line: int = 0, col: int = 0, hint: str = "") -> None:
        super().__init__(message)
        self.line = line
        self.col = col
        self.hint = hint


class OutputInvalid(MigrationError):
    """A rule produced code that does not re-parse: a bug in the rule, the file stays as it was."""


class RuleCrashed(MigrationError):
    """A rule raised unexpectedly on a file: the file is left as it was and listed as failed."""

    def __init__(self, message: str, traceback_text: str = "") -> None:
        super().__init__(message)
        self.traceback_text = traceback_text
