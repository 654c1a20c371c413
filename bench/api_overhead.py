"""The component API's own per-tuple cost beside the plain-Python reference loop's
(``bench/reference_loop.py``), for ``bench/instance_paths.py``'s API overhead section
(issue 31): ours measured on the engine path (``instance_pipeline.measure`` minus the
floor's steps that are not the API) and with no engine (the classes hosted in this
process)."""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.instance_floor import measure_floor
from bench.instance_pipeline import measure
from bench.reference_loop import ReferenceFigures, picker_of, time_round
from bench.wordcount_figures import BOLT, SPOUT, TOPOLOGY_HERON, bench_options
from bench.wordcount_runs import _BoltSink, load, local_hosting
from compat.storm_api.hosting import host_component
from engine.common.runtime.layout import build_context
from engine.instance.bolt_loop import tuple_runner
from engine.instance.spout_loop import spout_hooks

# -- the API overhead per tuple (issue 31) ------------------------------------------------

#: the goal: our API overhead per tuple (Storm's record types) at most this share of the
#: plain-Python reference loop's plain-object overhead, in the same run
API_GOAL_OVER_PLAIN = 0.5
#: the floor's steps that are not the component API, subtracted from the engine path's
#: spout emit + bolt execute: the user code's own work (the spout picks the word, the
#: bolt counts it) and the engine's serialization and transport (by the floor's names'
#: beginnings; "build the Tuple" is the API's, and Heron's word count emits no result row)
NON_API_STEPS = ("pick the word", "serialize the row", "hash the grouping key",
                 "decode the rows", "count the word")


class _Deliver(_BoltSink):
    """The no-engine figure's collector for the spout: each emit is handed straight to a
    counting task as the engines hand it over, through the bolt's per-tuple entry
    (``engine.instance.bolt_loop.tuple_runner``: build the ``Tuple``, ``process``,
    auto-ack): a word to the task the hash of the word picks (fields grouping, as the
    reference loop does it), any other subscribed stream (the end-of-stream marker) to
    every task (all grouping). The tuple id is None, as in the reference loop."""

    #: ``sync`` does nothing: the engine's spout loop calls the spout's own
    #: ``next_tuple`` with no wrapper (``HostedSpout.direct_hooks``)
    syncs_nothing = True

    def __init__(self, runs: dict[str, list[Callable[[Any, Any], None]]]) -> None:
        super().__init__()
        self._words = runs["default"]
        self._tasks = len(self._words)
        self._others = {stream: r for stream, r in runs.items() if stream != "default"}

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: Any,
             need_task_ids: bool, tup_id: Any) -> None:
        if stream is None or stream == "default":
            self._words[hash(values[0]) % self._tasks](None, values)
            return
        for run in self._others.get(stream, ()):
            run(None, values)


def time_hosted(loaded: Any, words: int,
                clock: Callable[[], float] = time.process_time) -> tuple[float, dict[str, int]]:
    """The component API with no engine: the topology's spout and counting bolt classes
    hosted as the engines host them (``host_component``), the spout called through the
    engine's per-tuple hook (``spout_hooks``) and each emit handed to a counting task's
    ``tuple_runner`` (:class:`_Deliver`). Returns the CPU seconds of ``words`` calls of
    ``next_tuple`` (one word each) and the counting tasks' counts, merged."""
    plan = loaded.plan
    classes = loaded.compiled.component_classes
    layout, conf = local_hosting(loaded)
    logger = logging.getLogger("bench.paths.hosted")
    spout_task = layout.tasks_by_component[SPOUT][0]
    bolts = [host_component(classes[BOLT], conf(BOLT), build_context(plan, layout, BOLT, task),
                            _BoltSink(), logger)
             for task in layout.tasks_by_component[BOLT]]
    subscribed = [i.stream for i in plan.components[BOLT].inputs if i.source == SPOUT]
    feeder = _Deliver({stream: [tuple_runner(bolt, SPOUT, stream, spout_task) for bolt in bolts]
                       for stream in subscribed})
    spout = host_component(classes[SPOUT], conf(SPOUT),
                           build_context(plan, layout, SPOUT, spout_task), feeder, logger)
    try:
        next_tuple = spout_hooks(spout).next_tuple
        began = clock()
        for _ in range(words):
            next_tuple()
        took = clock() - began
        while not spout.is_exhausted():  # the end-of-stream marker, untimed
            next_tuple()
        counts: dict[str, int] = {}
        for bolt in bolts:
            counts.update(bolt.component.counts)
    finally:
        spout.close()
        for bolt in bolts:
            bolt.close()
    return took, counts


@dataclass
class ApiFigures:
    """The API overhead per tuple, ours and the reference loop's, from rounds run one
    after the other in one process: each round times the reference loop's three modes,
    our API path with no engine, the engine path (Heron's word count at-most-once) and
    the floor's steps. Each figure is its best round (or the median)."""

    words: int
    reference: ReferenceFigures
    #: "hosted", "spout emit", "bolt execute" -> CPU seconds of each round
    seconds: dict[str, list[float]] = field(default_factory=dict)
    #: the floor's steps -> CPU µs per word of each round
    steps: dict[str, list[float]] = field(default_factory=dict)
    #: what went wrong with the counts (empty: the hosted path counted what the fused
    #: loop counted, and the engine path executed every word, in every round)
    count_errors: list[str] = field(default_factory=list)

    @property
    def rounds(self) -> int:
        return self.reference.rounds

    @property
    def statistic(self) -> str:
        return self.reference.statistic

    def _pick(self, values: Sequence[float]) -> float:
        return min(values) if self.statistic == "best" else statistics.median(values)

    def us(self, name: str) -> float:
        """CPU µs per word of ``hosted``, ``spout emit`` or ``bolt execute``."""
        return self._pick(self.seconds[name]) / self.words * 1e6

    def step_us(self) -> dict[str, float]:
        return {name: self._pick(values) for name, values in self.steps.items()}

    def non_api_us(self) -> dict[str, float]:
        """The floor's steps subtracted from the engine path (:data:`NON_API_STEPS`)."""
        steps = self.step_us()
        return {name: us for name, us in steps.items() if name.startswith(NON_API_STEPS)}

    def engine_path_us(self) -> float:
        return self.us("spout emit") + self.us("bolt execute")

    def engine_overhead_us(self) -> float:
        return self.engine_path_us() - sum(self.non_api_us().values())

    def hosted_overhead_us(self) -> float:
        return self.us("hosted") - self.reference.us_per_word()["fused"]

    def ratios(self, overhead: float) -> dict[str, float | None]:
        ref = self.reference.overhead_us()
        return {"over_plain": overhead / ref["plain"] if ref["plain"] > 0 else None,
                "over_named": overhead / ref["named"] if ref["named"] > 0 else None}

    def goal_met(self, overhead: float) -> bool | None:
        over = self.ratios(overhead)["over_plain"]
        return None if over is None else over <= API_GOAL_OVER_PLAIN

    @property
    def counts_ok(self) -> bool:
        return self.reference.counts_match and not self.count_errors

    def as_json(self) -> dict[str, Any]:
        ref = self.reference
        engine, hosted = self.engine_overhead_us(), self.hosted_overhead_us()

        def r(value: float | None) -> float | None:
            return None if value is None else round(value, 4)
        return {
            "words": self.words, "rounds": self.rounds, "statistic": self.statistic,
            "clock": "CPU (time.process_time)",
            "goal": {"our_overhead_over_plain_at_most": API_GOAL_OVER_PLAIN,
                     "engine_path_met": self.goal_met(engine),
                     "no_engine_met": self.goal_met(hosted)},
            "reference": ref.as_json(),
            "no_engine": {"us_per_word": r(self.us("hosted")),
                          "fused_us_per_word": r(ref.us_per_word()["fused"]),
                          "overhead_us_per_word": r(hosted),
                          **{k: r(v) for k, v in self.ratios(hosted).items()}},
            "engine_path": {"us_per_word": {"spout emit": r(self.us("spout emit")),
                                            "bolt execute": r(self.us("bolt execute"))},
                            "non_api_us_per_word": {k: r(v) for k, v in self.non_api_us().items()},
                            "overhead_us_per_word": r(engine),
                            **{k: r(v) for k, v in self.ratios(engine).items()}},
            "seconds_per_round": {k: [round(x, 5) for x in v] for k, v in self.seconds.items()},
            "counts_match": self.counts_ok, "count_errors": list(self.count_errors)}


def measure_api(words: int, seed: int, rounds: int, statistic: str = "best",
                clock: Callable[[], float] = time.process_time) -> ApiFigures:
    """The API overhead per tuple of our path, twice, beside the reference loop's, in
    ``rounds`` rounds (see :class:`ApiFigures`), on Heron's word count (the spout
    ``WordSpout``, the counting bolt ``HeronCountBolt``, which emits nothing per word)."""
    loaded = load(bench_options(words, seed), 2, topology=TOPOLOGY_HERON)
    picker = picker_of(loaded, seed)
    figures = ApiFigures(words, ReferenceFigures(words, seed, statistic))
    for number in range(1, rounds + 1):
        fused = time_round(figures.reference, picker, clock)
        took, counts = time_hosted(loaded, words, clock)
        figures.seconds.setdefault("hosted", []).append(took)
        if counts != fused:
            figures.count_errors.append(f"round {number}: the no-engine API path counted "
                                        f"{sum(counts.values()):,} words, {len(counts):,} "
                                        "distinct, unlike the fused loop")
        del counts, fused
        path = measure(loaded, words, "at-most-once", 1)
        for name in ("spout emit", "bolt execute"):
            figures.seconds.setdefault(name, []).append(path.seconds[name])
        if path.counted != words:
            figures.count_errors.append(f"round {number}: the engine path executed "
                                        f"{path.counted:,} of {words:,} words")
        floor = measure_floor(loaded, words, seed)
        for name, us in floor.steps.items():
            figures.steps.setdefault(name, []).append(us)
    missing = [p for p in NON_API_STEPS if not any(n.startswith(p) for n in figures.steps)]
    if missing:  # the floor's steps were renamed: say so rather than subtract too little
        raise RuntimeError(f"the floor has no step named {', '.join(map(repr, missing))}")
    return figures


def api_lines(api: ApiFigures) -> list[str]:
    """The verdict: ours against the goal, figures only."""
    plain = api.reference.overhead_us()["plain"]
    parts = []
    for label, overhead in (("the engine path", api.engine_overhead_us()),
                            ("with no engine", api.hosted_overhead_us())):
        over = api.ratios(overhead)["over_plain"]
        parts.append(f"{label} {overhead:.2f} µs ("
                     + ("-" if over is None else f"{over:.2f}x") + ")")
    met = [api.goal_met(o) for o in (api.engine_overhead_us(), api.hosted_overhead_us())]
    verdict = ("not judged: the reference loop's overhead did not come out positive (too "
               "few words for the clock?)" if None in met
               else "met by both" if all(met) else "met by the no-engine path only" if met[1]
               else "met by the engine path only" if met[0] else "not met")
    lines = [f"goal (issue 31): our API overhead per tuple, with Storm's record types, at most "
             f"{API_GOAL_OVER_PLAIN:g}x the plain-object reference loop's ({plain:.2f} µs here, "
             f"so {API_GOAL_OVER_PLAIN * plain:.2f} µs): " + "; ".join(parts) + f": {verdict} "
             "(figures only: nothing here is pass/fail)"]
    if not api.counts_ok:
        lines.append("✗ counts: " + "; ".join(
            api.count_errors or ["a reference mode counted unlike the fused loop"]))
    else:
        lines.append(f"✓ counts: in every round the reference modes and the no-engine path "
                     f"counted what the fused loop counted, and the engine path executed all "
                     f"{api.words:,} words")
    return lines


def render_api(console: Console, api: ApiFigures) -> None:
    ref_us, ref_over = api.reference.us_per_word(), api.reference.overhead_us()
    label = f"best of {api.rounds}" if api.statistic == "best" else f"median of {api.rounds}"
    table = Table(title=f"API overhead per tuple, CPU µs per word ({api.words:,} words, "
                        f"{label} rounds in this run)")
    for name, justify in (("path", "left"), ("µs/word", "right"), ("minus", "right"),
                          ("API overhead", "right"), ("x plain", "right"),
                          ("x named", "right")):
        table.add_column(name, justify=justify, no_wrap=name != "path")

    def ratio(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"
    hosted, engine = api.hosted_overhead_us(), api.engine_overhead_us()
    rows = (("reference: plain objects", ref_us["plain"], ref_us["fused"], ref_over["plain"]),
            ("reference: Storm's records", ref_us["named"], ref_us["fused"], ref_over["named"]),
            ("ours, no engine", api.us("hosted"), ref_us["fused"], hosted),
            ("ours, engine path", api.engine_path_us(), sum(api.non_api_us().values()), engine))
    for name, us, minus, overhead in rows:
        r = api.ratios(overhead)
        table.add_row(name, f"{us:.2f}", f"{minus:.2f}", f"{overhead:.2f}",
                      ratio(r["over_plain"]), ratio(r["over_named"]),
                      style="bold" if name.startswith("ours") else None)
    console.print(table)
    for line in (
            "reference: the plain-Python loop (bench/reference_loop.py), spout.next_tuple -> "
            "collector.emit -> Tuple -> hash of the word -> bolt.execute -> count, with a "
            "slotted Tuple (plain) or a Tuple namedtuple of a values namedtuple (Storm's "
            "records); minus its fused pick-and-count loop",
            "ours, no engine: WordSpout and HeronCountBolt through host_component, the spout "
            "loop's hook and the bolt's tuple_runner, each word handed to the task its hash "
            "picks; minus the same fused loop",
            f"ours, engine path: the engine's spout emit {api.us('spout emit'):.2f} and bolt "
            f"execute {api.us('bolt execute'):.2f} paths (as timed above, here on Heron's word "
            "count, at-most-once); minus the floor's " + ", ".join(f"{name.split(' (')[0]} {us:.2f}"
                                  for name, us in api.non_api_us().items())):
        console.print(line, style="dim")
    for line in api_lines(api):
        console.print(line)
