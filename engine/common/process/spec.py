"""What to run: one named process of a topology."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class ProcessSpec:
    """A process the supervisor owns.

    ``name`` is Heron's executor process name (``stmgr-1``,
    ``container_1_count-bolt_3``...); it names the log file and the pid file, so two
    specs of one supervisor must not share it.
    """

    name: str
    argv: tuple[str, ...] | list[str]
    log_path: Path | str
    env: dict[str, str] | None = field(default=None, compare=False)
    cwd: Path | str | None = None

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(f"invalid process name {self.name!r}")
        if not self.argv:
            raise ValueError(f"process {self.name!r} has an empty command")
        object.__setattr__(self, "argv", tuple(str(a) for a in self.argv))
