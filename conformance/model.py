"""The conformance suite's shared vocabulary: what a case compares, how a difference is
classified, and the records ``results.json`` is made of.

Three parts meet here and nowhere else: the runner (which runs cases on engines and
writes captures), the differ (which classifies two captures on PySpark) and the report
(which renders ``results.json`` without Spark). Keeping the records plain dataclasses
with ``to_json``/``from_json`` means the report can be re-rendered, and results compared
across versions, from the file alone.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal


class SemanticClass(str, enum.Enum):
    """How an observed output relates to a reference output, as multisets of rows."""

    EXACT = "exact"
    #: every reference row is there; the extras are only more copies of reference rows
    #: (what replays under at-least-once produce)
    AT_LEAST_ONCE = "at-least-once superset"
    #: nothing but reference rows, some copies missing (what losses under at-most-once do)
    AT_MOST_ONCE = "at-most-once subset"
    #: novel rows, or missing and duplicated rows at once
    DIVERGENT = "divergent"

    def within(self, allowed: SemanticClass) -> bool:
        """Whether an observed class is acceptable where ``allowed`` is the weakest
        guarantee a case accepts (``EXACT`` accepts only exact; ``AT_LEAST_ONCE`` accepts
        exact or duplicates; ``AT_MOST_ONCE`` exact or missing; ``DIVERGENT`` anything)."""
        if allowed is SemanticClass.DIVERGENT or self is SemanticClass.EXACT:
            return True
        return self is allowed


class Verdict(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"          # the engines ran, the outputs are outside the allowed class
    ERROR = "error"        # the harness or an engine could not produce an output
    SKIPPED = "skipped"    # a capability the case needs is missing (reason given)
    KNOWN_FAILURE = "known failure"  # a documented gap (reason given); does not fail the run


@dataclass(frozen=True)
class Comparison:
    """What of two outputs must agree.

    ``rows``: the multiset of ``(component, stream, *values)`` rows, values at
    ``ignore_columns`` dropped. ``per_key``: aggregating cases emit running values
    (``[word, count]`` after every word) and a replay legitimately emits more of them, so
    only the final value per key is compared: ``key_columns`` form the key,
    ``value_column`` the value, reduced per key with ``reduce``.
    """

    kind: Literal["rows", "per_key"] = "rows"
    #: the (component, stream) pairs compared; empty means every captured leaf stream
    streams: tuple[tuple[str, str], ...] = ()
    ignore_columns: tuple[int, ...] = ()
    key_columns: tuple[int, ...] = ()
    value_column: int | None = None
    reduce: Literal["max", "last", "sum", "min"] = "max"
    #: floats are compared after rounding to this many significant digits
    float_digits: int = 12

    def __post_init__(self) -> None:
        if self.kind == "per_key" and (not self.key_columns or self.value_column is None):
            raise ValueError("a per_key comparison needs key_columns and value_column")


@dataclass
class DiffCounts:
    rows_left: int = 0
    rows_right: int = 0
    distinct_left: int = 0
    distinct_right: int = 0
    #: copies of left rows the right side lacks (with multiplicity)
    missing: int = 0
    #: extra copies on the right of rows the left has
    duplicate_extras: int = 0
    #: copies on the right of rows the left never had
    novel_extras: int = 0
    #: distinct rows whose copies differ between the sides (``samples`` holds the first)
    differing: int = 0


@dataclass
class DiffRow:
    """One differing canonical row: how many copies each side has."""

    row: list[Any]
    left: int
    right: int


@dataclass
class DiffResult:
    left: str                     # e.g. "expected", "storm"
    right: str                    # e.g. "heron"
    observed: SemanticClass
    counts: DiffCounts
    #: the first differing rows in a stable order (sorted canonical form), at most N
    samples: list[DiffRow] = field(default_factory=list)
    comparison: str = "rows"
    #: what canonicalisation did (ignored columns, float digits, per-key reduction), for
    #: the report
    notes: list[str] = field(default_factory=list)
    #: per side (by its name): ``rows`` compared, and for captures read from files their
    #: ``files`` and ``bytes``
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: wall time of the Spark job that compared the two sides, in seconds
    spark_seconds: float | None = None
    #: counts per stream (``component``, ``stream`` and the ``DiffCounts`` fields) when
    #: more than one stream was compared
    streams: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["observed"] = self.observed.value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DiffResult:
        return cls(left=data["left"], right=data["right"],
                   observed=SemanticClass(data["observed"]),
                   counts=DiffCounts(**data["counts"]),
                   samples=[DiffRow(**row) for row in data.get("samples", [])],
                   comparison=data.get("comparison", "rows"),
                   notes=list(data.get("notes", [])),
                   inputs=dict(data.get("inputs", {})),
                   spark_seconds=data.get("spark_seconds"),
                   streams=list(data.get("streams", [])))


@dataclass
class EngineRun:
    """One run of one case on one engine."""

    engine: str
    run_id: str
    verdict: Verdict              # this engine's output against the case's expected rows
    elapsed: float = 0.0
    #: the shell command that reproduces this run
    command: str = ""
    #: capture file(s) written by the run, relative to the report directory
    outputs: list[str] = field(default_factory=list)
    reason: str = ""              # why error/skipped/known failure
    diff: DiffResult | None = None  # against the expected rows
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["verdict"] = self.verdict.value
        out["diff"] = self.diff.to_json() if self.diff else None
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EngineRun:
        data = dict(data)
        data["verdict"] = Verdict(data["verdict"])
        data["diff"] = DiffResult.from_json(data["diff"]) if data.get("diff") else None
        return cls(**data)


@dataclass
class PairResult:
    """Two engines' outputs of one case against each other."""

    left: str
    right: str
    verdict: Verdict
    reason: str = ""
    diff: DiffResult | None = None

    def to_json(self) -> dict[str, Any]:
        return {"left": self.left, "right": self.right, "verdict": self.verdict.value,
                "reason": self.reason, "diff": self.diff.to_json() if self.diff else None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PairResult:
        return cls(left=data["left"], right=data["right"], verdict=Verdict(data["verdict"]),
                   reason=data.get("reason", ""),
                   diff=DiffResult.from_json(data["diff"]) if data.get("diff") else None)


@dataclass
class CaseResult:
    case: str
    description: str
    allowed: SemanticClass
    tags: list[str]
    runs: list[EngineRun]
    pairs: list[PairResult]
    #: repetition index when run with --repeat N (0-based)
    repeat: int = 0

    @property
    def verdict(self) -> Verdict:
        """The case's overall verdict: the worst of its runs and pairs."""
        verdicts = [r.verdict for r in self.runs] + [p.verdict for p in self.pairs]
        for worst in (Verdict.ERROR, Verdict.FAIL, Verdict.KNOWN_FAILURE, Verdict.SKIPPED):
            if worst in verdicts:
                return worst
        return Verdict.PASS

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "description": self.description,
                "allowed": self.allowed.value, "tags": list(self.tags),
                "repeat": self.repeat, "verdict": self.verdict.value,
                "runs": [r.to_json() for r in self.runs],
                "pairs": [p.to_json() for p in self.pairs]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CaseResult:
        return cls(case=data["case"], description=data.get("description", ""),
                   allowed=SemanticClass(data["allowed"]), tags=list(data.get("tags", [])),
                   runs=[EngineRun.from_json(r) for r in data["runs"]],
                   pairs=[PairResult.from_json(p) for p in data["pairs"]],
                   repeat=data.get("repeat", 0))


@dataclass
class SuiteResult:
    """Everything ``results.json`` holds."""

    started: str                  # ISO 8601 UTC
    elapsed: float
    engines: list[str]
    command: str
    cases: list[CaseResult]
    environment: dict[str, Any] = field(default_factory=dict)  # versions, spark master...

    def exit_code(self) -> int:
        """0 all pass (skipped and known failures allowed), 1 a conformance failure,
        2 a harness error."""
        verdicts = {c.verdict for c in self.cases}
        if Verdict.ERROR in verdicts:
            return 2
        if Verdict.FAIL in verdicts:
            return 1
        return 0

    def to_json(self) -> dict[str, Any]:
        return {"format": 1, "started": self.started, "elapsed": self.elapsed,
                "engines": list(self.engines), "command": self.command,
                "environment": dict(self.environment),
                "cases": [c.to_json() for c in self.cases]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SuiteResult:
        return cls(started=data["started"], elapsed=data["elapsed"],
                   engines=list(data["engines"]), command=data.get("command", ""),
                   cases=[CaseResult.from_json(c) for c in data["cases"]],
                   environment=dict(data.get("environment", {})))

