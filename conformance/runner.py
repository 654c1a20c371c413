"""The runner: cases × engines × repeats, captured, diffed on PySpark, judged.

For each repeat, cases that run the same topology on the same input share one run per
engine (the seven grouping cases are one topology). Each run's capture is compared with
the case's expected rows (computed by its pure function from the fixture) and the
engines' captures with each other (the first engine is the reference); every comparison
is a :class:`~conformance.model.DiffResult` from :func:`conformance.diff.diff_captures`,
which reads the capture files on Spark's executors: the runner never loads a capture.

Verdicts: an engine lacking a capability the case needs is SKIPPED (naming it); a run
that cannot start, fails or passes its time bound is an ERROR naming case and engine;
otherwise the observed semantic class decides: within the allowed class PASS, else FAIL.
Under ``--inject-failures`` at-least-once cases get a task killed mid-run and are judged
by the class they allow under failure.
"""

from __future__ import annotations

import platform
import shlex
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from compat.storm_api.config import reliability, with_defaults
from compat.storm_api.project import load_project
from conformance.capture import CAPTURE_SUFFIX, read_capture, write_records
from conformance.catalogue.case import Case, CaseError, Kill
from conformance.diff import diff_captures, diff_many
from conformance.engines import EngineAdapter, EngineOutput, HarnessError, isolated_imports
from conformance.fixture_spout import read_fixture, wrap_project
from conformance.kafka_input import KafkaInputError, kafka_options, load_topic
from conformance.model import (
    CaseResult,
    Comparison,
    DiffResult,
    EngineRun,
    PairResult,
    SemanticClass,
    SuiteResult,
    Verdict,
)
from conformance.twin import migrated_copy, twin_runs
from engine.common.submission import load_topology

__all__ = ["ProgressListener", "Runner", "describe_diff", "expected_records",
           "fixture_inputs", "migrated_copy", "topology_case"]

CAPTURES = "captures"
WORK = "work"


class ProgressListener(Protocol):
    """What a runner tells its caller while it works (the CLI shows it with rich)."""

    def suite_started(self, total_runs: int) -> None: ...

    def run_started(self, label: str, engine: str, repeat: int) -> None: ...

    def run_finished(self, label: str, engine: str, repeat: int, outcome: str,
                     elapsed: float) -> None: ...

    def comparing(self, case: str, repeat: int) -> None: ...

    def case_finished(self, result: CaseResult) -> None: ...

    # optional: ``spark_progress(line)`` gets Spark's stage progress while a diff runs


class NullProgress:
    def suite_started(self, total_runs: int) -> None:
        pass

    def run_started(self, label: str, engine: str, repeat: int) -> None:
        pass

    def run_finished(self, label: str, engine: str, repeat: int, outcome: str,
                     elapsed: float) -> None:
        pass

    def comparing(self, case: str, repeat: int) -> None:
        pass

    def case_finished(self, result: CaseResult) -> None:
        pass


# -- inputs and expected rows -------------------------------------------------------------
def fixture_inputs(case: Case) -> dict[str, list[list[Any]]]:
    """The values of each spout's fixture rows, as the expected function takes them."""
    try:
        return {spout: [row.values for row in read_fixture(Path(path))]
                for spout, path in case.fixtures.items()}
    except ValueError as exc:
        raise CaseError(f"case {case.name}: {exc}") from None


def expected_records(case: Case) -> list[dict[str, Any]]:
    """The case's expected rows as capture records (engine ``expected``)."""
    if case.expected is None:
        return []
    rows = case.expected(fixture_inputs(case))
    out = []
    for row in rows:
        try:
            component, stream, values = row
        except (TypeError, ValueError):
            raise CaseError(f"case {case.name}: its expected function returned {row!r}; "
                            "rows are (component, stream, values)") from None
        out.append({"component": component, "stream": stream, "task": None,
                    "values": list(values)})
    return out


def describe_diff(diff: DiffResult, allowed: SemanticClass) -> str:
    """One line: the observed class against the allowed one, and the counts."""
    c = diff.counts
    parts = [f"{c.rows_right} rows vs {c.rows_left} from {diff.left}"]
    if c.missing:
        parts.append(f"{c.missing} missing")
    if c.duplicate_extras:
        parts.append(f"{c.duplicate_extras} duplicate extras")
    if c.novel_extras:
        parts.append(f"{c.novel_extras} novel")
    return (f"{diff.right} vs {diff.left}: observed {diff.observed.value}, allowed "
            f"{allowed.value} ({', '.join(parts)})")


# -- user topologies ------------------------------------------------------------------------
def topology_case(project: Path, name: str | None, *, work_dir: Path,
                  fixture: Path | None = None, max_tuples: int | None = None,
                  comparison: Comparison | None = None, options: Mapping[str, Any] | None = None,
                  env: str | None = None, inject: Kill | None = None,
                  time_limit: float = 120.0, label: str | None = None) -> Case:
    """A case for the user's own topology: its spouts replaced by the fixture spout
    (``fixture``), bounded (``max_tuples``), or left as they are (they must end by
    themselves). There are no expected rows: the engines are compared with each other.
    """
    project = Path(project).resolve()
    topology_file = load_project(project).topology_file(name)
    topology = topology_file.stem
    run_project = project
    if fixture is not None or max_tuples is not None:
        run_project = wrap_project(project, topology_file, Path(work_dir) / f"project-{topology}",
                                   fixture=fixture, max_tuples=max_tuples)
    comparison = comparison or Comparison()
    acking, leaves = _plan_facts(run_project, topology, options, env)
    if comparison.kind == "per_key" and not comparison.streams:
        # a final value per key is a property of result streams, not of every stream
        comparison = replace(comparison, streams=tuple(leaves))
    allowed_under_failure: SemanticClass | None = None
    if acking:
        # a replay may repeat rows, never lose them; final values per key stay exact
        allowed_under_failure = (SemanticClass.EXACT if comparison.kind == "per_key"
                                 else SemanticClass.AT_LEAST_ONCE)
    source = (f"the fixture {fixture}" if fixture is not None else
              f"its own spouts bounded to {max_tuples} tuples per task"
              if max_tuples is not None else "its own finite spouts")
    return Case(
        name=label or topology, project=run_project, topology=topology,
        description=f"topology {topology} of {project} on {source}",
        comparison=comparison, expected=None, options=dict(options or {}), env=env,
        allowed=SemanticClass.EXACT, allowed_under_failure=allowed_under_failure,
        inject=inject, time_limit=time_limit, tags=("user",))


def _plan_facts(project: Path, topology: str, options: Mapping[str, Any] | None,
                env: str | None) -> tuple[bool, list[tuple[str, str]]]:
    """Whether the topology runs at-least-once (only then does a kill replay anything),
    and its leaf streams (nobody consumes them: its results)."""
    with isolated_imports(project, project / "src", project / "topologies"):
        loaded = load_topology(project, name=topology, env=env, cli_options=dict(options or {}))
    plan = loaded.plan
    leaves = [(comp.name, stream) for comp in plan.components.values()
              for stream in comp.outputs if not plan.consumers(comp.name, stream)]
    return reliability(with_defaults(plan.config)).acking, leaves


# -- the runner -----------------------------------------------------------------------------
@dataclass
class _Run:
    """One engine's run of a group of cases."""

    engine: str
    output: EngineOutput | None = None
    verdict: Verdict | None = None       # SKIPPED or ERROR when there is no output
    reason: str = ""
    #: the run's capture directory (one file per task), once the run finished (None: no
    #: output to compare)
    capture: Path | None = None
    run_id: str = ""
    kill: Kill | None = None
    files: list[str] = field(default_factory=list)


#: the name the expected rows go by in a diff
EXPECTED = "expected"


class Runner:
    """Runs cases on engine adapters and judges them.

    ``spark`` is a SparkSession or a callable returning one (started on the first diff,
    so a suite where everything is skipped needs no JVM). ``pairs`` names the engine
    pairs compared with each other (default: the first engine against each other one).
    """

    def __init__(self, adapters: Sequence[EngineAdapter], *, spark: Any, report_dir: Path,
                 repeat: int = 1, inject_failures: bool = False,
                 time_limit: float | None = None,
                 progress: ProgressListener | None = None,
                 pairs: Sequence[tuple[str, str]] | None = None, sample_limit: int = 20,
                 command: str = "",
                 command_for: Callable[[Case, str, bool], str] | None = None,
                 kafka: str | None = None) -> None:
        if not adapters:
            raise HarnessError("no engines to run on")
        names = [a.name for a in adapters]
        if len(set(names)) != len(names):
            raise HarnessError(f"engines named twice: {', '.join(names)}")
        if repeat < 1:
            raise HarnessError(f"--repeat must be 1 or more, got {repeat}")
        self.adapters = list(adapters)
        self._spark = spark
        self.report_dir = Path(report_dir)
        self.repeat = repeat
        self.inject_failures = inject_failures
        self.time_limit = time_limit
        self.progress: ProgressListener = progress or NullProgress()
        if pairs is None:
            pairs = [(names[0], other) for other in names[1:]]
        for left, right in pairs:
            if left not in names or right not in names:
                raise HarnessError(f"pair {left} vs {right} names an engine not run")
        self.pairs = list(pairs)
        self.sample_limit = sample_limit
        self.command = command
        self.command_for = command_for or _catalogue_command
        #: the broker Kafka cases load their fixtures into (``--kafka``); None skips them
        self.kafka = kafka
        #: the case being judged: its diffs, computed together (see _diff_case)
        self._case_diffs: dict[tuple[str, str], DiffResult] = {}

    # -- spark ------------------------------------------------------------------------
    @property
    def spark(self) -> Any:
        if callable(self._spark) and not hasattr(self._spark, "createDataFrame"):
            self._spark = self._spark()
        return self._spark

    def _diff(self, left: Path, right: Path, comparison: Comparison,
              left_name: str, right_name: str) -> DiffResult:
        done = self._case_diffs.pop((left_name, right_name), None)
        if done is not None:
            return done
        return diff_captures(self.spark, [left], [right], comparison, left=left_name,
                             right=right_name, sample_limit=self.sample_limit,
                             progress=getattr(self.progress, "spark_progress", None))

    # -- the suite --------------------------------------------------------------------
    def run(self, cases: Sequence[Case]) -> SuiteResult:
        started = datetime.now(timezone.utc)
        began = time.monotonic()
        groups = self._groups(cases)
        self.progress.suite_started(self.repeat * len(self.adapters) * sum(
            2 if group[0].twin else 1 for group in groups))
        results: list[CaseResult] = []
        for rep in range(self.repeat):
            for group in groups:
                results.extend(self._run_group(group, rep))
        environment = {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "repeat": self.repeat,
            "inject_failures": self.inject_failures,
        }
        if not callable(self._spark) or hasattr(self._spark, "createDataFrame"):
            try:
                environment["spark_master"] = self._spark.sparkContext.master
                environment["spark_version"] = self._spark.version
            except AttributeError:  # a stand-in session (tests)
                pass
        return SuiteResult(started=started.isoformat(timespec="seconds"),
                           elapsed=round(time.monotonic() - began, 3),
                           engines=[a.name for a in self.adapters], command=self.command,
                           cases=results, environment=environment)

    def _groups(self, cases: Sequence[Case]) -> list[list[Case]]:
        seen = set()
        for case in cases:
            if case.name in seen:
                raise CaseError(f"two cases are named {case.name!r}")
            seen.add(case.name)
        groups: dict[tuple, list[Case]] = {}
        for case in cases:
            groups.setdefault(case.run_key(self.inject_failures), []).append(case)
        return list(groups.values())

    def _run_group(self, group: list[Case], rep: int) -> list[CaseResult]:
        lead = group[0]
        label = lead.name if len(group) == 1 else f"{lead.topology} ({len(group)} cases)"
        slug = lead.name if len(group) == 1 else f"{lead.topology}-shared"
        kill = lead.injected_kill(self.inject_failures)
        runs: dict[str, _Run] = {}
        lead, skip = self._through_kafka(lead, slug, rep)
        for adapter in self.adapters:
            if skip is not None:
                self.progress.run_started(label, adapter.name, rep)
                runs[adapter.name] = _Run(engine=adapter.name, kill=kill,
                                          verdict=Verdict.SKIPPED if self.kafka is None
                                          else Verdict.ERROR, reason=skip)
                self.progress.run_finished(label, adapter.name, rep, "skipped"
                                           if self.kafka is None else "error", 0.0)
                continue
            runs[adapter.name] = self._run_engine(adapter, lead, group, rep, label, slug, kill)
        pairs = self.pairs
        if lead.twin and skip is None:
            # the case's migrated twin on every engine, each compared with its original
            twins, why = twin_runs(self.adapters, lead, self.report_dir)
            for twin in twins:
                if why is not None:
                    runs[twin.name] = _Run(engine=twin.name, kill=kill, verdict=Verdict.ERROR,
                                           reason=why)
                else:
                    runs[twin.name] = self._run_engine(twin, lead, group, rep, label,
                                                       f"{slug}-migrated", kill)
            pairs = [*pairs, *((a.name, t.name) for a, t in zip(self.adapters, twins))]
        return [self._judge(case, runs, rep, kill, len(group) > 1, pairs) for case in group]

    def _through_kafka(self, lead: Case, slug: str, rep: int) -> tuple[Case, str | None]:
        """The case with its Kafka spouts' fixtures loaded into fresh topics and the
        options pointing at them; or why it cannot run (no broker, or the load failed)."""
        if not lead.kafka_spouts:
            return lead, None
        if self.kafka is None:
            return lead, "needs a Kafka broker: heron-conformance run --kafka HOST:PORT"
        try:
            topics = {spout: load_topic(self.kafka,
                                        [row.values for row in read_fixture(lead.fixtures[spout])],
                                        prefix=f"conformance-{slug}-r{rep}")
                      for spout in lead.kafka_spouts}
        except KeyError as exc:
            raise CaseError(f"case {lead.name}: Kafka spout {exc.args[0]!r} has no "
                            "fixture") from None
        except KafkaInputError as exc:
            return lead, f"case {lead.name}: {exc}"
        return replace(lead, options={**lead.options,
                                      **kafka_options(self.kafka, topics)}), None

    def _run_engine(self, adapter: EngineAdapter, lead: Case, group: list[Case], rep: int,
                    label: str, slug: str, kill: Kill | None) -> _Run:
        run = _Run(engine=adapter.name, kill=kill)
        self.progress.run_started(label, adapter.name, rep)
        began = time.monotonic()
        skip = adapter.skip_reason(lead, kill)
        if skip:
            run.verdict, run.reason = Verdict.SKIPPED, skip
            self.progress.run_finished(label, adapter.name, rep, "skipped", 0.0)
            return run
        run.run_id = f"{slug}-{adapter.name}-r{rep}-{uuid.uuid4().hex[:8]}".replace(":", "-")
        engine_slug = adapter.name.replace(":", "-")
        # a directory: each task of the run writes its own file there
        capture = self.report_dir / CAPTURES / f"r{rep}" / slug / engine_slug
        work = self.report_dir / WORK / run.run_id
        named = lead if len(group) == 1 else replace(lead, name=slug)
        try:
            output = adapter.run(named, run_id=run.run_id, capture_path=capture,
                                 work_dir=work, kill=kill, time_limit=self.time_limit)
        except (HarnessError, CaseError) as exc:
            run.verdict, run.reason = Verdict.ERROR, str(exc)
            self.progress.run_finished(label, adapter.name, rep, "error",
                                       time.monotonic() - began)
            return run
        run.output = output
        run.files = [self._relative(capture) + ("/" if capture.is_dir() else "")]
        if not output.finished:
            run.verdict = Verdict.ERROR
            run.reason = output.error or (f"case {lead.name} on engine {adapter.name} ended "
                                          f"with {output.reason}")
        elif not capture.exists():
            run.verdict = Verdict.ERROR
            run.reason = f"case {lead.name} on engine {adapter.name} wrote no capture"
        else:
            run.capture = capture
        self.progress.run_finished(label, adapter.name, rep,
                                   "error" if run.verdict is Verdict.ERROR else "ran",
                                   output.elapsed)
        return run

    def _relative(self, path: Path) -> str:
        try:
            return str(Path(path).resolve().relative_to(self.report_dir.resolve()))
        except ValueError:
            return str(path)

    # -- judging ----------------------------------------------------------------------
    def _case_files(self, case: Case, run: _Run, rep: int, shared: bool) -> list[str]:
        """The run's capture, and for a shared run the case's own streams in a file of
        their own (with the case's name as provenance)."""
        if not shared or run.capture is None:
            return list(run.files)
        wanted = {(c, s) for c, s in case.comparison.streams}
        mine = (r for r in read_capture(run.capture, typed=True)
                if not wanted or (r["component"], r["stream"]) in wanted)
        path = (self.report_dir / CAPTURES / f"r{rep}" / case.name
                / run.engine.replace(':', '-') / f"{case.name}{CAPTURE_SUFFIX}")
        write_records(path, mine, engine=run.engine, case=case.name, run_id=run.run_id)
        return [self._relative(path), *run.files]

    def _judge(self, case: Case, runs: Mapping[str, _Run], rep: int, kill: Kill | None,
               shared: bool, pairs: Sequence[tuple[str, str]] | None = None) -> CaseResult:
        self.progress.comparing(case.name, rep)
        injected = kill is not None
        allowed = case.allowed_for(injected)
        expected: Path | None = None
        expected_file: str | None = None
        expected_error = ""
        if case.expected is not None:
            try:
                path = self.report_dir / CAPTURES / f"r{rep}" / case.name / "expected.jsonl"
                write_records(path, expected_records(case), engine="expected",
                              case=case.name, run_id=f"{case.name}-expected")
                expected = path
                expected_file = self._relative(path)
            except (CaseError, OSError) as exc:
                expected_error = f"case {case.name}: the expected rows cannot be computed: {exc}"
        pairs = self.pairs if pairs is None else pairs
        self._case_diffs = self._diff_case(case, runs, expected if not expected_error
                                           else None, pairs)
        engine_runs: list[EngineRun] = []
        for run in runs.values():
            engine_runs.append(self._engine_verdict(case, run, rep, shared, allowed, expected,
                                                    expected_file, expected_error))
        pair_results = [self._pair_verdict(case, runs[left], runs[right], allowed, injected)
                        for left, right in pairs]
        self._case_diffs = {}
        tags = list(case.tags) + (["injected-failure"] if injected else [])
        result = CaseResult(case=case.name, description=case.description, allowed=allowed,
                            tags=tags, runs=engine_runs, pairs=pair_results, repeat=rep)
        self.progress.case_finished(result)
        return result

    def _diff_case(self, case: Case, runs: Mapping[str, _Run], expected: Path | None,
                   pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], DiffResult]:
        """Every diff the case's verdicts need (the expected rows against each engine's
        capture, the engines against each other), in one Spark pass that reads each
        capture once. When that pass fails, nothing: each verdict then runs its own diff,
        so the failure is reported against the run it concerns, as before."""
        captures = {name: run.capture for name, run in runs.items() if run.capture is not None}
        if EXPECTED in captures:  # an engine named like the expected rows: diff one by one
            return {}
        wanted = [(EXPECTED, name) for name in captures] if expected is not None else []
        wanted += [(left, right) for left, right in pairs
                   if left in captures and right in captures]
        if len(wanted) < 2:
            return {}
        sources: dict[str, list[Path]] = {name: [path] for name, path in captures.items()}
        if expected is not None:
            sources[EXPECTED] = [expected]
        try:
            return diff_many(self.spark, sources, wanted, case.comparison,
                             sample_limit=self.sample_limit,
                             progress=getattr(self.progress, "spark_progress", None))
        except Exception:  # each verdict's own diff then reports it
            return {}

    def _engine_verdict(self, case: Case, run: _Run, rep: int, shared: bool,
                        allowed: SemanticClass, expected: Path | None,
                        expected_file: str | None, expected_error: str) -> EngineRun:
        output = run.output
        metadata: dict[str, Any] = {}
        if output is not None:
            metadata.update(output.metadata)
            metadata["records"] = output.records
            if output.log_dir is not None:
                metadata["logs"] = self._relative(output.log_dir)
        if shared:
            metadata["shared run"] = "one run of this topology serves every case on it"
        command = self.command_for(case, run.engine, run.kill is not None)
        result = EngineRun(engine=run.engine, run_id=run.run_id, verdict=Verdict.PASS,
                           elapsed=round(output.elapsed, 3) if output else 0.0,
                           command=command, metadata=metadata)
        if run.verdict is not None:
            result.verdict, result.reason = run.verdict, run.reason
            result.outputs = list(run.files)
            return result
        try:
            result.outputs = self._case_files(case, run, rep, shared)
        except (OSError, ValueError) as exc:  # ValueError: CaptureFormatError
            result.verdict = Verdict.ERROR
            result.reason = f"case {case.name} on {run.engine}: cannot write its capture: {exc}"
            return result
        if expected_file:
            result.outputs.append(expected_file)
        if expected_error:
            result.verdict, result.reason = Verdict.ERROR, expected_error
            return result
        if expected is None:
            result.reason = "ran to the end; no expected rows (the engines are compared)"
            return result
        assert run.capture is not None  # a run with no verdict yet wrote its capture
        try:
            diff = self._diff(expected, run.capture, case.comparison, EXPECTED,
                              run.engine)
        except Exception as exc:  # a record the comparison cannot read, Spark failing
            result.verdict = Verdict.ERROR
            result.reason = (f"case {case.name} on {run.engine}: comparing with the expected "
                             f"rows failed: {type(exc).__name__}: {exc}")
            return result
        result.diff = diff
        result.verdict = Verdict.PASS if diff.observed.within(allowed) else Verdict.FAIL
        result.reason = describe_diff(diff, allowed)
        _apply_known_failure(case, result, [run.engine])
        return result

    def _pair_verdict(self, case: Case, left: _Run, right: _Run, allowed: SemanticClass,
                      injected: bool) -> PairResult:
        pair = PairResult(left=left.engine, right=right.engine, verdict=Verdict.SKIPPED)
        for run in (left, right):
            if run.capture is None:
                state = ("skipped" if run.verdict is Verdict.SKIPPED else "no output")
                pair.reason = f"{run.engine}: {state} ({run.reason})" if run.reason else state
                return pair
        pair_allowed = allowed
        note = ""
        if injected and case.comparison.kind == "rows":
            pair_allowed = SemanticClass.DIVERGENT
            note = ("; both runs replayed under an injected failure, so their rows are "
                    "compared for information; each run is judged against the expected rows")
        assert left.capture is not None and right.capture is not None  # the loop above
        try:
            diff = self._diff(left.capture, right.capture, case.comparison,
                              left.engine, right.engine)
        except Exception as exc:
            pair.verdict = Verdict.ERROR
            pair.reason = (f"case {case.name}: comparing {left.engine} with {right.engine} "
                           f"failed: {type(exc).__name__}: {exc}")
            return pair
        pair.diff = diff
        pair.verdict = Verdict.PASS if diff.observed.within(pair_allowed) else Verdict.FAIL
        pair.reason = describe_diff(diff, pair_allowed) + note
        _apply_known_failure(case, pair, [left.engine, right.engine])
        return pair


def _apply_known_failure(case: Case, result: EngineRun | PairResult,
                         engines: Sequence[str]) -> None:
    """A failure on an engine the case lists as a known gap becomes KNOWN_FAILURE with the
    documented reason first; a pass there says the entry is stale."""
    reasons = [(e, why) for e in engines if (why := case.known_failure(e))]
    if not reasons:
        return
    why = "; ".join(f"{e}: {r}" for e, r in reasons)
    if result.verdict is Verdict.FAIL:
        result.verdict = Verdict.KNOWN_FAILURE
        result.reason = f"known failure ({why}); {result.reason}"
    elif result.verdict is Verdict.PASS:
        result.reason = (f"{result.reason}; listed as a known failure ({why}) but passed: "
                         "the entry in the case can go")


def _catalogue_command(case: Case, engine: str, injected: bool) -> str:
    parts = ["heron-conformance", "run", *(["--heronpy"] if case.twin else []), "--cases",
             f"^{case.name}$", "--engines", engine.split(":")[0]]
    if injected and case.kill is None:
        parts.append("--inject-failures")
    return " ".join(shlex.quote(p) for p in parts)


def default_command() -> str:
    """The command line of this process, for ``results.json``."""
    return " ".join(shlex.quote(a) for a in ["heron-conformance", *sys.argv[1:]])
