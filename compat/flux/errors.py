"""The one error a Flux file can raise: :class:`FluxError`, a line ``FILE:LINE: what``.

It is a ``ProjectError`` (the CLI's bad-input family: one line, exit status 2) and a
``ValueError`` (the contract the migrator builds against), so every caller that already
handles either handles a bad Flux file without knowing about Flux.
"""

from __future__ import annotations

from compat.storm_api.project import ProjectError

__all__ = ["FluxError", "Where"]


class Where:
    """A place in a Flux file: the file as the user named it and a 1-based line."""

    __slots__ = ("file", "line")

    def __init__(self, file: str, line: int) -> None:
        self.file = file
        self.line = line

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    def __repr__(self) -> str:
        return f"Where({self.file!r}, {self.line})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Where) and (self.file, self.line) == (other.file, other.line)

    def __hash__(self) -> int:
        return hash((self.file, self.line))


class FluxError(ProjectError, ValueError):
    """A Flux file that cannot run here; the message starts with ``FILE:LINE:`` and names
    the key, component or Java class at fault, so the user can go straight to it."""

    def __init__(self, where: Where | str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.problem = message
