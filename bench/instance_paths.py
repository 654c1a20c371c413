"""Per-tuple CPU cost of the heron engine's hot paths, measured in one process.

``bench/wordcount.py`` says how fast the whole topology runs; this says where each
word's time goes, path by path, without processes, sockets or scheduling noise. It
drives the word-count benchmark's own spout and counting bolt through the engine's real
code: the spout instance's loop and collector (``SpoutLoop``, ``InstanceCollector``),
the Stream Manager's routing (``split_batch``/``rebatch``, or ``AckTracker`` under
acking), the bolt instance's batch execution (``BoltLoop``, with the leaf-stream capture)
and, at-least-once, the acks going back to the spout. Only the zmq hops between them
are left out.

    python bench/instance_paths.py                  # 300,000 words, both reliabilities
    python bench/instance_paths.py --tuples 1000000 --reliability at-least-once --json
    python bench/instance_paths.py --reliability at-most-once --floor
    python bench/instance_paths.py --reliability at-most-once --tuples 100000 --rounds 5

``--floor`` also times, one step at a time with no engine code around them, what every
word needs whatever the engine (pick the word, serialize the row, hash its key, decode
it, build the ``Tuple``, count, serialize and keep the result), against the CPU per word
heron may spend in all its processes to reach half the bare loop's rate on this
machine's cores: how much of the design goal's budget is left for engine code.

The **API overhead** section (on unless ``--no-api``) sets the component API's own
per-tuple cost beside the plain-Python reference loop's (``bench/reference_loop.py``),
in the same run, for the goal of issue 31 (ours, with Storm's record types, at most half
the reference loop's plain-object overhead). Ours is measured twice, on Heron's word
count (``WordSpout`` into ``HeronCountBolt``, at-most-once):

* **engine path**: the spout emit and bolt execute paths (as the first section times
  them), minus the floor's steps that are not the API: the user code's own work (pick
  the word, count it) and the engine's serialization and transport (serialize the row,
  hash its key, decode the rows). It is approximate both ways: what is left still holds
  engine work the floor does not list (the batch's protobuf encoding and parsing, the
  flushes), while the floor serializes the row and hashes its key apart where the
  engine does both in one pass;
* **no engine**: the same classes hosted through ``host_component`` in this process, the
  spout called through the spout loop's hook and each emit handed to the counting task
  its word's hash picks, through the bolt's ``tuple_runner`` (the ``Tuple`` the engines
  build, ``process``, auto-ack), minus the fused pick-and-count loop with the same
  picker: the API path and nothing else, as the reference loop measures its own. It
  also holds the benchmark spout's and bolt's own bookkeeping (the words left, the
  sampling countdown, the ``ts`` check), which the reference loop's classes do not have.

Each round times the reference loop's three modes, the no-engine path, the engine path
and the floor's steps, one after the other; each figure is its best round (``--rounds``,
3; ``--statistic median`` for the median). The verdict line says whether each of ours
is within the goal; it never changes the exit status, which only says whether every
word was counted.

Use it to see what a change to a hot path costs or saves; the figures are CPU
microseconds per word on this machine, and nothing here is a pass/fail threshold.

The paths are wired and timed in ``bench/instance_pipeline.py``, the floor in
``bench/instance_floor.py``, the API overhead in ``bench/api_overhead.py``; this module
runs them and prints the figures.

The tuple path (``engine.common.codec``) is the process's own choice, said in the first line:
the compiled one where it is built; run with ``HERON_PURE_PYTHON=1`` for the pure-Python
twin, to see the two side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from bench.api_overhead import measure_api, render_api  # noqa: E402
from bench.instance_floor import measure_floor, render_floor  # noqa: E402
from bench.instance_pipeline import RELIABILITIES, PathFigures, measure  # noqa: E402
from bench.reference_loop import STATISTICS  # noqa: E402
from bench.wordcount_figures import TOPOLOGY, TOPOLOGY_ALO, bench_options  # noqa: E402
from bench.wordcount_runs import load  # noqa: E402
from engine.common.codec import selected  # noqa: E402


def render(console: Console, runs: Sequence[PathFigures]) -> None:
    table = Table(title=f"heron hot paths in one process: CPU µs per word "
                        f"({runs[0].words:,} words, the word-count benchmark's classes)")
    table.add_column("path")
    for run in runs:
        table.add_column(run.reliability, justify="right")
    names: list[str] = []
    for run in runs:
        names += [n for n in run.seconds if n not in names]
    for name in names:
        cells = [f"{run.per_word_us()[name]:.2f}" if name in run.seconds else "-" for run in runs]
        table.add_row(name, *cells)
    table.add_row("all", *[f"{sum(run.per_word_us().values()):.2f}" for run in runs],
                  style="bold")
    console.print(table)
    for run in runs:
        ok = "✓" if run.counted == run.words else "✗"
        console.print(f"{ok} {run.reliability}: the counting tasks executed {run.counted:,} "
                      f"of {run.words:,} words")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/instance_paths.py",
        description="CPU cost per word of the heron engine's spout, Stream Manager and bolt "
                    "paths, in one process")
    parser.add_argument("--tuples", type=int, default=300_000, help="words (default 300,000)")
    parser.add_argument("--reliability", choices=[*RELIABILITIES, "both"], default="both")
    parser.add_argument("--max-pending", type=int, default=1024,
                        help="topology.max.spout.pending at-least-once (default 1,024)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--floor", action="store_true",
                        help="also time the steps every word needs with no engine code "
                             "(the floor under any engine of this design)")
    parser.add_argument("--no-api", dest="api", action="store_false",
                        help="skip the API overhead section (our per-tuple API path, with and "
                             "without the engine, against the plain-Python reference loop)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of the API overhead section (default 3)")
    parser.add_argument("--statistic", choices=STATISTICS, default="best",
                        help="the API overhead section's figure of each path: its best round "
                             "(default) or the median")
    parser.add_argument("--json", action="store_true", help="figures as JSON on stdout")
    args = parser.parse_args(argv)
    if args.tuples < 1 or args.max_pending < 1 or args.rounds < 1:
        parser.error("--tuples, --max-pending and --rounds must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    reliabilities = RELIABILITIES if args.reliability == "both" else (args.reliability,)
    console = Console(stderr=args.json)
    path = selected()
    console.print(path.describe())
    runs = []
    for reliability in reliabilities:
        topology = TOPOLOGY_ALO if reliability == "at-least-once" else TOPOLOGY
        with console.status(f"{reliability}: {args.tuples:,} words through the hot paths"):
            loaded = load(bench_options(args.tuples, args.seed), 2, topology=topology)
            runs.append(measure(loaded, args.tuples, reliability, args.max_pending))
    floor = None
    if args.floor:
        with console.status(f"the floor: {args.tuples:,} words, one step at a time"):
            floor = measure_floor(load(bench_options(args.tuples, args.seed), 2), args.tuples,
                                  args.seed)
    api = None
    if args.api:
        with console.status(f"API overhead: {args.rounds} rounds of {args.tuples:,} words, "
                            "ours and the reference loop's"):
            api = measure_api(args.tuples, args.seed, args.rounds, args.statistic)
    if args.json:
        out: dict[str, Any] = {"tuple_path": "compiled" if path.compiled else "pure Python",
                               "runs": [run.as_json() for run in runs]}
        if floor is not None:
            out["floor"] = floor.as_json()
        if api is not None:
            out["api_overhead"] = api.as_json()
        print(json.dumps(out, indent=2))
    else:
        render(console, runs)
        if floor is not None:
            render_floor(console, floor)
        if api is not None:
            render_api(console, api)
        console.print(f"machine: {os.cpu_count()} CPUs, load average "
                      + ", ".join(f"{x:.2f}" for x in os.getloadavg()), style="dim")
    counted = all(run.counted == run.words for run in runs)
    return 0 if counted and (api is None or api.counts_ok) else 1


if __name__ == "__main__":
    sys.exit(main())
