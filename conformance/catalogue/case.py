"""What a conformance case is: a declarative record the runner executes on each engine.

A case names a topology (a project directory and ``-n NAME``), its input fixtures (per
spout), how outputs are compared, the weakest semantic class it accepts with and
without failure injection, the capabilities it needs (tags) and a pure function that
computes the expected rows from the input. Built-in cases live in
:mod:`conformance.catalogue.cases`; ``heron-conformance run --topology`` and
``migrate`` build cases for the user's own projects the same way (without an expected
function: their engines are compared with each other).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.model import Comparison, SemanticClass

#: where the built-in fixture projects and input fixtures live
CATALOGUE_DIR = Path(__file__).resolve().parent
PROJECTS = CATALOGUE_DIR / "projects"
FIXTURES = CATALOGUE_DIR / "fixtures"

#: capability tags an engine may lack, and how a skipped verdict names them
CAPABILITIES: dict[str, str] = {
    "acking": "at-least-once acking (issue: heron acking/backpressure)",
    "failure-injection": ("failure injection by the harness (killing a task at a chosen "
                          "tuple and restarting it with what it held lost)"),
    "multilang": "multi-lang components",
    "ticks": "tick tuples",
    "direct": "direct grouping",
    "stateful": "effectively-once state (checkpoints and whole-topology rollbacks)",
}

#: ``(component, stream, values)``: one expected row
Row = tuple[str, str, list[Any]]
ExpectedFn = Callable[[Mapping[str, Sequence[Sequence[Any]]]], list[Row]]


class CaseError(ValueError):
    """A case is declared wrongly or its files are missing (names the case)."""


@dataclass(frozen=True)
class Kill:
    """Kill one task of ``component`` mid-run: its ``after``-th tuple, counted from the
    start of the run, crashes the task, which is restarted with whatever it held lost
    (as a worker crash loses it); under at-least-once the roots time out and replay."""

    #: None: the topology's first bolt
    component: str | None = None
    after: int = 10


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    #: the project directory (a name under ``projects/`` for built-in cases)
    project: Path
    #: the topology (``-n``); None when the project has one
    topology: str | None
    comparison: Comparison
    #: spout component -> fixture file; given to the spout as option
    #: ``conformance.input.<spout>`` (built-in spouts read it; the fixture spout too)
    fixtures: Mapping[str, Path] = field(default_factory=dict)
    #: the expected rows, computed from the fixtures' rows; None: engines compared only
    expected: ExpectedFn | None = None
    allowed: SemanticClass = SemanticClass.EXACT
    #: the weakest class accepted under ``--inject-failures``; None: the case is not
    #: at-least-once and runs without injected failures
    allowed_under_failure: SemanticClass | None = None
    tags: tuple[str, ...] = ()
    #: extra topology options (``-o KEY=VALUE``)
    options: Mapping[str, Any] = field(default_factory=dict)
    #: failure injected on every run of this case (a failure-injection case)
    kill: Kill | None = None
    #: what ``--inject-failures`` kills (default: a task of the first bolt)
    inject: Kill | None = None
    env: str | None = None
    workers: int | None = None
    #: the run ends by itself well within this; past it the run is a harness error
    time_limit: float = 60.0
    #: run Python components with shell specs as multi-lang subprocesses
    multilang: bool = False
    #: spouts whose fixture goes through Kafka (conformance.kafka_input): written to a
    #: fresh topic, read by the spout from the suite's broker (``--kafka``)
    kafka_spouts: tuple[str, ...] = ()
    #: engine name -> why it is known not to conform on this case (a documented gap): a
    #: failure there is reported as "known failure" with the reason and does not fail the
    #: run; a pass there is reported too, so the entry can be removed
    known_failures: Mapping[str, str] = field(default_factory=dict)
    #: "heronpy": the project is heronpy's API; its ``heron-migrate --heronpy`` copy runs
    #: beside it on every engine (as ``ENGINE:migrated``) and each engine's original is
    #: compared with its twin. None: no twin
    twin: str | None = None

    def known_failure(self, engine: str) -> str | None:
        """The documented reason ``engine`` (a label such as ``heron:migrated`` counts as
        its engine) is known to fail this case, or None."""
        return self.known_failures.get(engine) or self.known_failures.get(engine.split(":")[0])

    def needs(self) -> list[str]:
        """The capability tags this case needs an engine to have."""
        return [t for t in self.tags if t in CAPABILITIES]

    def allowed_for(self, injected: bool) -> SemanticClass:
        if injected and self.allowed_under_failure is not None:
            return self.allowed_under_failure
        return self.allowed

    def injected_kill(self, inject_failures: bool) -> Kill | None:
        """The failure this run injects: the case's own, or with ``--inject-failures``
        the one at-least-once cases accept."""
        if self.kill is not None:
            return self.kill
        if inject_failures and self.allowed_under_failure is not None:
            return self.inject or Kill()
        return None

    def run_key(self, inject_failures: bool) -> tuple[Any, ...]:
        """Cases with the same key run the same topology on the same input: one run
        serves them all (each compares its own streams)."""
        return (str(self.project), self.topology, tuple(sorted((k, str(v)) for k, v in
                                                               self.fixtures.items())),
                tuple(sorted((k, repr(v)) for k, v in self.options.items())),
                self.env, self.workers, self.multilang, self.injected_kill(inject_failures),
                self.kafka_spouts, self.twin)
