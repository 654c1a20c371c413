"""Run a job on the streaming platform: plan it, run the topology on an engine, read results.

``run_streaming(job, engine="storm" | "heron")`` gives the memory and batch platforms'
contract: when it returns, the job's stores hold their final contents, every sink has
received its elements (once each, on the driver, in lineage order) and the result lists
the tail's outputs. In between:

* in-memory stores get a SQLite file each (seeded with their contents, copied back at
  the end): a summer on the heron engine is another process, and SQLite is the embedded
  store every process can merge into (``ledger.py`` makes those merges replay-safe);
* sinks and the tail's outputs are spooled by the tasks and replayed on the driver
  (``spool.py``);
* the plan goes to the engine's processes with cloudpickle (``topology.py``); on the
  heron engine through a generated project, which every instance imports;
* the run is at-least-once unless ``reliability="at_most_once"``; a task's error ends
  it with a ``JobRuntimeError`` naming the component and the Summingbird node.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import JobDefinitionError, JobRuntimeError, PlanningError
from ...options import OptionsLike
from ...producer import Producer
from ...stores import InMemoryStore, SQLiteStore
from ..base import Platform, RunResult
from . import ledger
from .components import DEFAULT_MAX_REPLAYS, RunSettings
from .planner import StreamingPlan, WriteOp, plan_streaming
from .spool import TAIL, SpoolSink, read_spool
from .topology import build_topology, dump_plan, load_plan, write_project

if TYPE_CHECKING:
    from engine.entry import EngineRun

log = logging.getLogger("summingbird.streaming")

ENGINES = ("storm", "heron")
RELIABILITY = {"at_least_once": "ATLEAST_ONCE", "at_most_once": "ATMOST_ONCE"}
DEFAULT_TIME_LIMIT = 300.0


@dataclass
class StreamingResult(RunResult):
    """``RunResult`` plus how the engine ran it."""

    engine: str = "storm"
    reason: str = "finished"
    elapsed: float = 0.0
    #: component -> the engine's counters (emitted, acked, failed, restarts...)
    components: dict[str, Any] = field(default_factory=dict)
    #: ``record_merges=True``: ``(summer, lineage, key, task)`` of every merge, per store path
    merges: dict[str, list[tuple[str, str, str, int]]] = field(default_factory=dict)


class _TaskFailed(Exception):
    """Raised from the progress callback to stop an engine as soon as a task reports."""


def _reliability_config(config: Mapping[str, Any], reliability: str) -> dict[str, Any]:
    if reliability not in RELIABILITY:
        raise PlanningError(f"reliability must be one of {', '.join(RELIABILITY)}, "
                            f"got {reliability!r}")
    out = dict(config)
    if "topology.reliability.mode" not in out and "topology.acker.executors" not in out:
        out["topology.reliability.mode"] = RELIABILITY[reliability]
    return out


class StreamingRun:
    """One run of a planned job on an engine: ``start()``, then ``finish()``.

    Between the two a test can act on the running topology (``pid_dir`` holds the heron
    engine's pid files); ``finish(on_progress=...)`` calls back while it waits.
    """

    def __init__(self, plan: StreamingPlan, engine: str = "storm", *,
                 working_dir: str | os.PathLike[str] | None = None,
                 time_limit: float = DEFAULT_TIME_LIMIT, max_replays: int = DEFAULT_MAX_REPLAYS,
                 record_merges: bool = False, keep_working_dir: bool = False) -> None:
        if engine not in ENGINES:
            raise PlanningError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        self.plan = plan
        self.engine = engine
        self.time_limit = time_limit
        self.max_replays = max_replays
        self.record_merges = record_merges
        self._own_dir = working_dir is None
        self.keep_working_dir = keep_working_dir
        self.working_dir = Path(working_dir or tempfile.mkdtemp(prefix=f"sb-{plan.name}-"))
        self.run_id = uuid.uuid4().hex
        self._stores: dict[int, tuple[Any, SQLiteStore]] = {}
        self._sinks: dict[str, Any] = {}
        self._engine: EngineRun | None = None
        self._started = False

    # -- paths --------------------------------------------------------------------------
    @property
    def spool_dir(self) -> Path:
        return self.working_dir / "spool"

    @property
    def error_dir(self) -> Path:
        return self.working_dir / "errors"

    @property
    def heron_dir(self) -> Path:
        return self.working_dir / "heron"

    @property
    def pid_dir(self) -> Path:
        """The heron engine's pid files (``<process name>.pid``)."""
        return self.heron_dir / "pids"

    # -- preparing -----------------------------------------------------------------------
    def _swap_io(self) -> StreamingPlan:
        stores: dict[int, Any] = {}
        sinks: dict[str, Any] = {}
        for node in self.plan.nodes:
            spec = node.summer
            if spec is not None and isinstance(spec.store, InMemoryStore) \
                    and id(spec.store) not in stores:
                path = self.working_dir / "stores" / f"{node.name}.sqlite"
                path.parent.mkdir(parents=True, exist_ok=True)
                sqlite = SQLiteStore(path, semigroup=spec.semigroup)
                try:
                    sqlite.put_all(spec.store.contents())
                except JobDefinitionError as exc:
                    raise PlanningError(f"{spec.label}: the streaming platform keeps in-memory "
                                        f"stores in SQLite, and {exc}") from None
                stores[id(spec.store)] = sqlite
                self._stores[id(spec.store)] = (spec.store, sqlite)
            for op in node.ops:
                if isinstance(op, WriteOp):
                    sinks[op.sink_id] = SpoolSink(op.sink_id)
                    self._sinks[op.sink_id] = op.sink
        return self.plan.replace_io(stores, sinks)

    def _summer_stores(self) -> list[SQLiteStore]:
        found: dict[str, SQLiteStore] = {}
        for node in self.plan.nodes:
            if node.summer is None:
                continue
            store = node.summer.store
            swapped = self._stores.get(id(store))
            store = swapped[1] if swapped else store
            if isinstance(store, SQLiteStore):
                found.setdefault(f"{store.path}:{store.table}", store)
        return list(found.values())

    def start(self) -> StreamingRun:
        """Prepare the run's files and start the topology on the engine."""
        if self._started:
            raise RuntimeError("a StreamingRun starts once")
        self._started = True
        self.working_dir.mkdir(parents=True, exist_ok=True)
        plan = self._swap_io()
        run = RunSettings(run_id=self.run_id, spool_dir=str(self.spool_dir),
                          error_dir=str(self.error_dir), max_replays=self.max_replays)
        data = dump_plan(plan, run)
        if self.engine == "storm":
            self._start_storm(data)
        else:
            self._start_heron(plan, data)
        return self

    def _start_storm(self, data: bytes) -> None:
        # deferred: start-up time; every task process of a planned job imports this package
        from engine.entry import storm_topology_run

        # The same bytes the heron engine's processes load: what cannot travel fails here too.
        plan, run = load_plan(data)
        topology = build_topology(plan, run)
        self._engine = storm_topology_run(topology, name=plan.name,
                                          log_dir=self.working_dir / "logs")

    def _start_heron(self, plan: StreamingPlan, data: bytes) -> None:
        # deferred: start-up time; every task process of a planned job imports this package
        from engine.entry import heron_project_run

        module = f"sb_{plan.name.replace('-', '_').replace('.', '_')}_{self.run_id[:10]}"
        project = write_project(self.working_dir / "project", module, plan.name, data)
        self._engine = heron_project_run(project, name=module, working_dir=self.heron_dir)

    # -- running -------------------------------------------------------------------------
    def errors(self) -> list[str]:
        """What tasks reported so far: ``component C task T: error``."""
        if not self.error_dir.is_dir():
            return []
        found = []
        for path in sorted(self.error_dir.iterdir()):
            if path.name.startswith("."):
                continue
            component, _, task = path.name.rpartition(".")
            found.append(f"component {component!r} task {task}: "
                         f"{path.read_text(encoding='utf-8').strip()}")
        return found

    def finish(self, on_progress: Callable[[StreamingRun, dict[str, Any], float], None]
               | None = None) -> StreamingResult:
        """Run to the end (or the time limit), then deliver stores, sinks and outputs."""
        if not self._started:
            self.start()

        def progress(stats: dict[str, Any], elapsed: float) -> None:
            if self.errors():
                raise _TaskFailed
            if on_progress is not None:
                on_progress(self, stats, elapsed)

        began = time.monotonic()
        try:
            try:
                engine = self._engine
                assert engine is not None  # start() made it
                result = engine.run(time_limit=self.time_limit, on_progress=progress)
                reason, error, components = result.reason, result.error, result.components
            except _TaskFailed:
                reason, error, components = "error", None, {}
            errors = self.errors()
            if errors:
                raise JobRuntimeError(
                    f"the streaming job {self.plan.name!r} failed on the {self.engine} engine: "
                    f"{errors[0]}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
                    + f"; logs in {self.working_dir}")
            if reason != "finished":
                raise JobRuntimeError(
                    f"the streaming job {self.plan.name!r} did not finish on the {self.engine} "
                    f"engine: {reason}" + (f" ({error})" if error else "")
                    + f"; logs in {self.working_dir}")
            merges = self._deliver()
            outputs = read_spool(self.spool_dir, TAIL)
        except BaseException:
            self.keep_working_dir = True
            raise
        finally:
            self._flush_sinks()
            self._close()
        return StreamingResult(outputs=outputs, engine=self.engine,
                               reason=reason, elapsed=time.monotonic() - began,
                               components=components, merges=merges)

    def _deliver(self) -> dict[str, list[tuple[str, str, str, int]]]:
        """Sinks get their elements, in-memory stores their contents; the ledger is dropped."""
        for sink_id in sorted(self._sinks, key=lambda s: int(s[1:])):
            sink = self._sinks[sink_id]
            for element in read_spool(self.spool_dir, sink_id):
                sink(element)
        for original, sqlite in self._stores.values():
            original.put_all(sqlite.contents())
        merges = {}
        for store in self._summer_stores():
            if self.record_merges:
                merges[store.path] = ledger.merged_lineages(store, self.run_id)
            ledger.forget_scope(store, self.run_id)
        return merges

    def _flush_sinks(self) -> None:
        for sink in self._sinks.values():
            flush = getattr(sink, "flush", None)
            if callable(flush):
                flush()

    def _close(self) -> None:
        for _, sqlite in self._stores.values():
            sqlite.close()
        if self._own_dir and not self.keep_working_dir:
            shutil.rmtree(self.working_dir, ignore_errors=True)


def run_streaming(tail: Producer, engine: str = "storm",
                  options: Mapping[str, OptionsLike] | None = None, *,
                  name: str | None = None, config: Mapping[str, Any] | None = None,
                  reliability: str = "at_least_once", **run_options: Any) -> StreamingResult:
    """Plan ``tail`` as a topology and run it to the end on ``engine`` (see the module doc).

    ``config`` holds Storm keys for the topology; ``run_options`` go to ``StreamingRun``
    (``working_dir``, ``time_limit``, ``max_replays``, ``record_merges``...).
    """
    plan = plan_streaming(tail, options, name=name,
                          config=_reliability_config(config or {}, reliability),
                          allow_in_memory_stores=True)
    return StreamingRun(plan, engine, **run_options).finish()


class StreamingPlatform(Platform[StreamingPlan]):
    """The streaming platform as a ``Platform``: ``execute(job)`` runs it on ``engine``."""

    def __init__(self, options: Mapping[str, OptionsLike] | None = None, engine: str = "storm",
                 *, config: Mapping[str, Any] | None = None, reliability: str = "at_least_once",
                 **run_options: Any) -> None:
        super().__init__(options)
        if engine not in ENGINES:
            raise PlanningError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        self.engine = engine
        self.config = _reliability_config(config or {}, reliability)
        self.run_options = run_options

    def plan(self, tail: Producer) -> StreamingPlan:
        return plan_streaming(tail, self.options, config=self.config, allow_in_memory_stores=True)

    def run(self, plan: StreamingPlan) -> StreamingResult:
        return StreamingRun(plan, self.engine, **self.run_options).finish()
