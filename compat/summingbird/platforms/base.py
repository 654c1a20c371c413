"""What every platform offers: ``plan(tail)`` (validate and prepare) and ``run(plan)``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..options import OptionsLike
from ..producer import Producer

P = TypeVar("P")


@dataclass
class RunResult:
    """The tail's elements, in the platform's order, and per-node run details."""

    outputs: list[Any]
    #: Batch only: partitions used per node id (empty on the memory platform).
    partitions: dict[int, int] = field(default_factory=dict)


class Platform(ABC, Generic[P]):
    """Summingbird's ``Platform``: plan a tail, then run the plan (possibly again)."""

    def __init__(self, options: Mapping[str, OptionsLike] | None = None) -> None:
        self.options = dict(options or {})

    @abstractmethod
    def plan(self, tail: Producer) -> P:
        """Validate the job and prepare it; nothing runs."""

    @abstractmethod
    def run(self, plan: P) -> RunResult:
        """Run a planned job to completion."""

    def execute(self, tail: Producer) -> RunResult:
        """``run(plan(tail))``."""
        return self.run(self.plan(tail))
