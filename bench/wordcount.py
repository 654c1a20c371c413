"""Word-count benchmark: the heron engine, the storm engine and single-process baselines,
at-most-once and at-least-once, and a backpressure scenario.

    python bench/wordcount.py [--words N] [--workers N] [--engines heron,storm]
                              [--reliability at-most-once|at-least-once|both]
                              [--max-pending N] [--alo-storm-words N]
                              [--backpressure SECS] [--bolt-cost-us US]
                              [--variants heron,streamparse] [--paths compiled,pure]
                              [--plaintext-too] [--quick] [--json] [--json-file PATH]
                              [--rate N] [--seed N] [--bare-runs N]
                              [--work-dir DIR] [--keep] [--time-limit SECS]

**Two word counts** (``--variants``), on one seeded, finite stream of words
(bench/projects/wordcount_bench: a spout picking words from a 175,000-word vocabulary,
fields grouping on the word, two counting tasks):

* **Heron's word count** (``wordcount_bench_heron``), the headline, as in Heron's own
  benchmark: the counting bolt keeps a map and emits nothing per word. To keep every run
  checked, the spout ends its stream with a marker on an ``eos`` stream that the bolt
  subscribes to with all grouping; when every spout task's marker has arrived the bolt
  emits each word's final count. This is plain Storm API, so it runs unchanged on both
  engines and in the single-process loop. The alternatives were weaker: Storm gives a
  bolt no end-of-stream or drain callback (``deactivate`` is a spout's, ``cleanup`` may
  not run and cannot emit reliably), tick tuples are periodic, and the heron engine's
  own ``TaskDone`` reaches no user code (it would need an engine hook). The marker is
  sent after its task's last word on the same route to each bolt task (Storm delivers
  one task's tuples in order; so does the heron engine, which sends a task's open batch
  when a row on another stream follows it, as Heron's instance does); a word arriving after
  it anyway
  would be emitted with its new count at once, so the captured counts stay right. At-least-once, the
  spout sends the marker only once every word's tree is acked.
* **streamparse-style** (``wordcount_bench``): the bolt emits ``[word, running count]``
  for every word, as a streamparse word count does.

**At-most-once** (acking off), each variant is run, in this order:

1. **single process** (the component-API loop): the same spout and bolt classes, hosted
   exactly as the engines host them, driven in a tight loop in this process with a
   minimal collector: ``next_tuple`` -> bolt ``process``, no serialization, no queues, no
   engine. It shows what the Storm component API costs per word before any engine;
2. **heron**: the real processes (Topology Master, per container a Stream Manager, a
   Metrics Manager and one process per task, under executors), through
   ``engine.common.local_run.HeronLocalRun``, while a sampler reads every process's peak RSS
   (``VmHWM``) and CPU time from the pid files the run writes. Once per tuple path
   (``--paths``): **compiled** (the default where a build loads) and **pure Python**
   (``HERON_PURE_PYTHON=1`` in every heron process), so the compiled path's gain shows
   in one run; the path each run's processes name in their first log line is checked;
3. **storm**: Storm's model in this process (``engine.storm.LocalCluster``).

Before them, a **bare Python loop** picks the same words with the spout's own picker and
counts them in a dict, with no component API at all: the single-process limit of the
design's performance budget ("one process: pick a random word and count it"), which the
goals are stated against, and an oracle for the counts. One timing of it swings with the
machine's momentary speed (0.8-1.35 M words/s in runs minutes apart), so it is timed
``--bare-runs`` times (3): before the first run, after the last (before the backpressure
scenario) and the rest spread between the runs. The report lists each timing and their
median, and every ratio to the bare loop (the table's ``x bare loop``, the goals,
``over_bare_loop`` and ``heron_over_bare_loop`` in JSON) is against the median; the goals'
lines and ``over_bare_loop_range`` also give the ratio against the fastest and the
slowest timing, the range one timing could have shown. The JSON's ``bare_loop`` has the
timings.

**Goals** (issue 20), each a ratio within one run, judged on the compiled runs: Heron's
word count at-most-once >= 0.5x the bare loop; streamparse-style >= 0.35x; at-least-once
>= 0.5x at-most-once at ``topology.max.spout.pending`` 1,024 with p99 complete latency
< 50 ms; flooded at-most-once (the spout floods: no ``--rate``) p99 emit-to-count
latency < 100 ms. The report shows each as a line (met / not met) and in ``goals`` of
the JSON.

**At-least-once** (``wordcount_bench_reliable``, Heron's word count; heron on each
tuple path): the same words, but the spout emits each with a message id and keeps it
for replay until it is acked, the bolt acks each word (auto-ack), one acker, and
``topology.max.spout.pending``
(``--max-pending``) bounds the trees in flight, as a Storm user of a reliable spout sets
it. Heron runs the full word count; storm's acking path is slower, so it gets
``--alo-storm-words``. Besides throughput, the spout measures **complete latency** from
its own view (emit to ``ack()``, for the stamped words) and emits it on a leaf stream.
Without failures at-least-once counts exactly, so the counts are checked as before.

**Backpressure** (``wordcount_bench_backpressure``, heron only, ``--backpressure SECS``):
the at-most-once spout into counting bolts that take ``--bolt-cost-us`` per word (about
ten times slower than the spout), for a fixed time. It reports the spout's emit rate
against the bolts' execute rate (throughput must follow the bolt), how long the Stream
Managers kept the spouts paused, the largest queue each Stream Manager held against the
high watermark, and the peak RSS of each process kind in the first, middle and last
third of the run (it must stay flat: nothing buffers without bound).

Throughput is measured where the words are counted: the counting bolt records the wall
clock of its first and (to within one sample interval) last stamped tuple, and tuples/s
is words counted over that window, so process start-up and shutdown are left out. The
spout stamps one tuple in ``sample_every`` with ``time.time_ns()``; the bolt emits the
emit-to-count delay of each stamped tuple on a ``latency`` leaf stream, which the engines
capture. The final counts of every run are compared: a benchmark that counts wrong is
worthless, so a mismatch makes the exit status 1 (as does a heron run whose processes
ran another tuple path than the one asked for).

Timings depend on what else the machine is doing; the load average is printed beside
the figures for that reason.

This file is the command line; the code is in three modules beside it:
``wordcount_figures.py`` (settings, what a run measured, the count checks, the process
sampler), ``wordcount_runs.py`` (each run and the backpressure scenario) and
``wordcount_report.py`` (the live status, the tables, the goals and the JSON report).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and str(ROOT) not in sys.path:
    # ``python bench/wordcount.py`` from a checkout that is not pip-installed
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.live import Live  # noqa: E402

from bench.wordcount_figures import (  # noqa: E402
    BP_VOCABULARY,
    DEFAULT_BARE_RUNS,
    DEFAULT_BOLT_COST_US,
    DEFAULT_BP_HIGH_MB,
    DEFAULT_BP_SECONDS,
    DEFAULT_MAX_PENDING,
    DEFAULT_SEED,
    DEFAULT_WORDS,
    DEFAULT_WORKERS,
    ENGINES,
    PATH_LABELS,
    PATHS,
    QUICK_BP_SECONDS,
    QUICK_WORDS,
    RELIABILITIES,
    TOPOLOGY_ALO,
    TOPOLOGY_BP,
    VARIANTS,
    BackpressureFigures,
    BareLoopTimings,
    CountCheck,
    KindFigures,
    RunFigures,
    bare_loop_slots,
    bench_options,
    check_groups,
)
from bench.wordcount_report import Status, build_report, goal_path, results_renderable  # noqa: E402
from bench.wordcount_runs import (  # noqa: E402
    compiled_available,
    load,
    run_backpressure,
    run_bare_loop,
    run_ceiling,
    run_heron,
    run_name,
    run_storm,
    tuple_path_env,
)
from engine.common.codec import selected  # noqa: E402

# -- command line --------------------------------------------------------------------------

def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/wordcount.py",
        description="Word-count throughput, latency and memory on the heron and storm "
                    "engines, against a bare single-process loop and the same code through "
                    "the component API in one process; at-most-once, at-least-once "
                    "and under backpressure.")
    parser.add_argument("--words", type=int, default=None,
                        help=f"words the spout emits (default {DEFAULT_WORDS:,}; "
                             f"--quick: {QUICK_WORDS:,})")
    parser.add_argument("--bare-runs", type=int, default=DEFAULT_BARE_RUNS, metavar="N",
                        help="time the bare loop N times: before the engine runs, after them "
                             "and the rest spread between them; every ratio against the bare "
                             "loop is against their median (default %(default)s)")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                        help="heron containers (default %(default)s)")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help="comma-separated engines to run: heron, storm (default "
                             "%(default)s); the bare loop and the component-API loop always run")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma-separated word counts to run at-most-once: heron "
                             "(Heron's own word count: the bolt keeps a map, emits nothing per "
                             "word, and its final counts at the end; the headline) and "
                             "streamparse (the bolt emits [word, count] per word) (default "
                             "%(default)s); at-least-once always runs Heron's")
    parser.add_argument("--paths", default=None,
                        help="comma-separated tuple paths for the heron engine's runs: "
                             "compiled, pure (HERON_PURE_PYTHON=1 in every heron process) "
                             "(default: both, or pure alone where no compiled build loads)")
    parser.add_argument("--reliability", default="both",
                        choices=[*RELIABILITIES, "both"],
                        help="at-most-once (acking off), at-least-once (message ids, acks, "
                             "max spout pending) or both (default)")
    parser.add_argument("--max-pending", type=int, default=DEFAULT_MAX_PENDING,
                        help="topology.max.spout.pending of the at-least-once runs "
                             "(default %(default)s)")
    parser.add_argument("--alo-storm-words", type=int, default=None,
                        help="words for storm's at-least-once run (default: a fifth of "
                             "--words; storm's acking path is slow)")
    parser.add_argument("--backpressure", type=float, default=None, metavar="SECS",
                        help=f"run the backpressure scenario on heron for SECS seconds "
                             f"(default {DEFAULT_BP_SECONDS:g}; --quick: {QUICK_BP_SECONDS:g}; "
                             "0: skip it)")
    parser.add_argument("--bolt-cost-us", type=float, default=DEFAULT_BOLT_COST_US,
                        help="the backpressure scenario's counting cost per word and task, "
                             "in microseconds (default %(default)s)")
    parser.add_argument("--watermark-mb", type=float, default=DEFAULT_BP_HIGH_MB,
                        help="the backpressure scenario's high watermark in MB; the low one "
                             "is half (default %(default)s; the engine's default is 8)")
    parser.add_argument("--plaintext-too", action="store_true",
                        help="Also run heron at-most-once with heron.network.plaintext "
                             "(peers authenticated, traffic not encrypted), to show what "
                             "CurveZMQ encryption costs.")
    parser.add_argument("--quick", action="store_true",
                        help=f"a small run ({QUICK_WORDS:,} words, a {QUICK_BP_SECONDS:g} s "
                             "backpressure scenario) that shows every figure")
    parser.add_argument("--json", action="store_true",
                        help="print the figures as JSON on stdout (status goes to stderr)")
    parser.add_argument("--json-file", type=Path, default=None, metavar="PATH",
                        help="also write the figures as JSON to PATH (the tables still print)")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="offer this many words/s (default: as fast as each run takes "
                             "them); for latency at a load the engine sustains")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="the word sequence's seed (default %(default)s)")
    parser.add_argument("--work-dir", type=Path, default=None,
                        help="where the runs' logs go (default: a temporary directory, "
                             "removed after a clean run)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the work directory even after a clean run")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="give up on an engine run after this many seconds "
                             "(default: 60 + words/10,000)")
    args = parser.parse_args(argv)
    if args.words is None:
        args.words = QUICK_WORDS if args.quick else DEFAULT_WORDS
    if args.words < 1:
        parser.error(f"--words must be at least 1, got {args.words}")
    if args.bare_runs < 1:
        parser.error(f"--bare-runs must be at least 1, got {args.bare_runs}")
    if args.rate < 0:
        parser.error(f"--rate must be positive (or 0: unlimited), got {args.rate}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    if args.max_pending < 1:
        parser.error(f"--max-pending must be at least 1, got {args.max_pending}")
    if args.alo_storm_words is None:
        args.alo_storm_words = max(1, args.words // 5)
    if args.alo_storm_words < 1:
        parser.error(f"--alo-storm-words must be at least 1, got {args.alo_storm_words}")
    if args.backpressure is None:
        args.backpressure = QUICK_BP_SECONDS if args.quick else DEFAULT_BP_SECONDS
    if args.backpressure < 0:
        parser.error(f"--backpressure must be positive (or 0: skip), got {args.backpressure}")
    if args.bolt_cost_us <= 0:
        parser.error(f"--bolt-cost-us must be positive, got {args.bolt_cost_us}")
    if args.watermark_mb <= 0:
        parser.error(f"--watermark-mb must be positive, got {args.watermark_mb}")
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(unknown)}; choose from {', '.join(ENGINES)}")
    args.engines = [e for e in ENGINES if e in engines]  # always heron before storm
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants:
        parser.error(f"unknown variant(s) {', '.join(unknown) or '(none given)'}; choose from "
                     f"{', '.join(VARIANTS)}")
    args.variants = [v for v in VARIANTS if v in variants]  # the headline first
    args.paths_given = args.paths is not None
    paths = [p.strip() for p in (args.paths or ",".join(PATHS)).split(",") if p.strip()]
    unknown = [p for p in paths if p not in PATHS]
    if unknown or not paths:
        parser.error(f"unknown tuple path(s) {', '.join(unknown) or '(none given)'}; choose "
                     f"from {', '.join(PATHS)}")
    args.paths = [p for p in PATHS if p in paths]  # compiled before pure
    args.reliability = (list(RELIABILITIES) if args.reliability == "both"
                        else [args.reliability])
    if "heron" not in args.engines:
        args.backpressure = 0.0  # a heron scenario
    if args.time_limit is None:
        args.time_limit = 60.0 + args.words / 10_000
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 0 when every run finished and the counts agree, else 1."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    out = Console(highlight=False, width=None if sys.stdout.isatty() else 140)
    status_console = Console(stderr=True) if args.json else out
    status_console.print(selected().describe())
    if "heron" in args.engines:
        if "compiled" in args.paths and not args.paths_given and not compiled_available():
            args.paths = ["pure"]
            status_console.print("no usable compiled tuple path here: the heron runs use the "
                                 "pure-Python one alone (see docs/compiled-path.md)")
        status_console.print("heron runs on the tuple path(s): " + ", ".join(
            PATH_LABELS[p] + (" (HERON_PURE_PYTHON=1 in every heron process)" if p == "pure"
                              else "") for p in args.paths))
    own_dir = args.work_dir is None
    work_dir = Path(tempfile.mkdtemp(prefix="wordcount-bench-")) if own_dir else args.work_dir
    work_dir.mkdir(parents=True, exist_ok=True)

    options = bench_options(args.words, args.seed, args.rate)
    loaded = {variant: load(options, args.workers, VARIANTS[variant][1])
              for variant in args.variants}
    oracle_loaded = next(iter(loaded.values()))
    status = Status(args.words)
    runs: list[RunFigures] = []
    alo_runs: list[RunFigures] = []
    #: heron run name -> its processes' peak RSS and CPU time
    kinds: dict[str, list[KindFigures]] = {}
    groups: list[tuple[list[RunFigures], int]] = []
    alo_groups: list[tuple[list[RunFigures], int]] = []
    bp: BackpressureFigures | None = None
    amo = "at-most-once" in args.reliability
    alo = "at-least-once" in args.reliability

    def interrupted() -> bool:
        return any(r.reason == "interrupted" for r in (*runs, *alo_runs))

    def work(name: str) -> Path:
        """A run's directory: heron, heron-streamparse, heron-pure, heron-alo-pure..."""
        slug = name.replace(" (at-least-once)", "-alo").replace(", streamparse-style",
                                                                "-streamparse")
        return work_dir / slug.replace(", pure Python", "-pure").replace(" (plaintext)",
                                                                        "-plaintext")

    # the bare loop is timed --bare-runs times, spread over the engine runs (the single-
    # process ones included): first before them all, last after them all
    heron_on, storm_on = "heron" in args.engines, "storm" in args.engines
    planned = ((len(args.variants) * (1 + len(args.paths) * heron_on + storm_on)
                + (heron_on and args.plaintext_too) if amo else 0)
               + (len(args.paths) * heron_on + storm_on if alo else 0))
    slots = bare_loop_slots(args.bare_runs, planned)
    bare_timings = BareLoopTimings(args.words)
    done: list[str] = []  # the runs so far, for the timings' labels
    bare: RunFigures | None = None

    def time_bare_loop(last: bool = False) -> None:
        """The bare loop's timings due at this point of the sequence (``last``: after every
        run, all that are left)."""
        nonlocal bare
        due = (args.bare_runs - len(bare_timings.timings) if last or not planned
               else sum(1 for slot in slots if slot == len(done) < planned))
        for _ in range(due):
            when = ("before the engine runs" if not done and not last
                    else "after the engine runs" if last else f"after {done[-1]}")
            status.phase(f"bare loop ({len(bare_timings.timings) + 1} of {args.bare_runs}, "
                         f"{when}): picking and counting {args.words:,} words")
            timing = run_bare_loop(oracle_loaded, args.words, args.seed)
            bare_timings.add(when, timing)
            if bare is None:
                bare = timing  # the oracle, and the runs' "bare Python loop"
            elif timing.counts != bare.counts:
                bare.error = f"the bare loop counted differently {when}"

    def before_run(name: str) -> None:
        if done:  # the timings before the first run are taken first of all, below
            time_bare_loop()
        done.append(name)

    load_before = os.getloadavg()
    with Live(status, console=status_console, refresh_per_second=4, transient=True):
        time_bare_loop()
        assert bare is not None
        runs.append(bare)
        if amo:
            for variant in args.variants:
                name = run_name("single process", variant)
                before_run(name)
                status.phase(f"{name}: {args.words:,} words through the spout and bolt code "
                             "with no engine")
                runs.append(run_ceiling(loaded[variant], args.words, name=name))
            if "heron" in args.engines:
                for path in args.paths:
                    for variant in args.variants:
                        if interrupted():
                            break
                        name = run_name("heron", variant, path)
                        before_run(name)
                        status.phase(f"{name}: starting {args.workers} containers")
                        figures, kinds[name] = run_heron(
                            loaded[variant], options, args.workers, work(name),
                            args.time_limit, status.progress, name=name, path=path)
                        runs.append(figures)
                if args.plaintext_too and not interrupted():
                    # the same run with the Stream Managers' TCP traffic authenticated
                    # but not encrypted (heron.network.plaintext): the cost of CurveZMQ
                    plain_options = {**options, "heron.network.plaintext": True}
                    path, variant = goal_path(args.paths), args.variants[0]
                    name = run_name("heron (plaintext)", variant, path)
                    before_run(name)
                    status.phase(f"{name}: starting {args.workers} containers")
                    plain, _ = run_heron(
                        load(plain_options, args.workers, VARIANTS[variant][1]), plain_options,
                        args.workers, work(name), args.time_limit, status.progress,
                        name=name, path=path)
                    plain.engine = name  # not the run the goals are judged on
                    runs.append(plain)
            if "storm" in args.engines:
                for variant in args.variants:
                    if interrupted():
                        break
                    name = run_name("storm", variant)
                    before_run(name)
                    status.phase(f"{name}: starting")
                    runs.append(run_storm(loaded[variant], args.words, work(name),
                                          args.time_limit, status.progress, name=name))
            groups.append((runs, args.words))
        if alo and "heron" in args.engines:
            alo_options = {**options, "topology.max.spout.pending": args.max_pending}
            alo_loaded = load(alo_options, args.workers, TOPOLOGY_ALO)
            for path in args.paths:
                if interrupted():
                    break
                name = run_name("heron", "heron", path, alo=True)
                before_run(name)
                status.phase(f"{name}: starting {args.workers} containers")
                figures, kinds[name] = run_heron(alo_loaded, alo_options, args.workers,
                                                 work(name), args.time_limit, status.progress,
                                                 name=name, path=path)
                alo_runs.append(figures)
            alo_groups.append(([bare, *alo_runs], args.words))
        if alo and "storm" in args.engines and not interrupted():
            words = args.alo_storm_words
            storm_options = {**bench_options(words, args.seed, args.rate),
                             "topology.max.spout.pending": args.max_pending}
            storm_loaded = load(storm_options, args.workers, TOPOLOGY_ALO)
            # the same spout tasks and words as the at-most-once topology's
            oracle = (bare if words == args.words
                      else run_bare_loop(oracle_loaded, words, args.seed))
            status.words = words
            before_run("storm (at-least-once)")
            status.phase("storm at-least-once: starting")
            figures = run_storm(storm_loaded, words, work_dir / "storm-alo",
                                60.0 + words / 2_000, status.progress,
                                name="storm (at-least-once)")
            alo_runs.append(figures)
            alo_groups.append(([oracle, figures], words))
            status.words = args.words
        if not interrupted():
            time_bare_loop(last=True)
        bare_timings.apply(bare)
        if args.backpressure > 0 and not interrupted():
            # a small vocabulary: the counting tasks' dicts are full at once, so what
            # their memory does over the run is what the engine buffers
            bp_options = {**bench_options(10**12, args.seed),
                          "bench.vocabulary": BP_VOCABULARY,
                          "bench.bolt_cost_us": args.bolt_cost_us,
                          "heron.streammgr.network.backpressure.highwatermark.mb":
                              args.watermark_mb,
                          "heron.streammgr.network.backpressure.lowwatermark.mb":
                              args.watermark_mb / 2}
            bp_loaded = load(bp_options, args.workers, TOPOLOGY_BP)
            with tuple_path_env(goal_path(args.paths)):
                bp = run_backpressure(bp_loaded, bp_options, args.workers, args.backpressure,
                                      work_dir / "heron-backpressure", 60.0 + args.backpressure,
                                      status.line)
    load_after = os.getloadavg()
    check = check_groups(groups) if groups else None
    alo_check = check_groups(alo_groups) if alo_groups else None
    all_runs = [*runs, *alo_runs] if (groups or alo_groups) else runs
    clean = (all(c is None or c.ok for c in (check, alo_check))
             and (check is not None or alo_check is not None)
             and all(r.reason == "finished" and not r.error for r in all_runs)
             and (bp is None or (bp.reason == "finished" and not bp.error)))
    keep = args.keep or not own_dir or not clean
    report = build_report(args, runs, kinds, check, load_before, load_after,
                          str(work_dir) if keep else None, alo_runs, alo_check, bp,
                          bare_timings)
    if args.json_file is not None:
        args.json_file.write_text(json.dumps(report, indent=2, default=str) + "\n")
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        shown = CountCheck(report["counts_match"], report["counts_detail"])
        out.print(results_renderable(report, runs, kinds, shown, alo_runs, bp))
    if not keep:
        shutil.rmtree(work_dir, ignore_errors=True)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
