"""Effectively-once on the heron engine (issue 29): what checkpoints cost.

    python bench/checkpoint.py [--duration 20] [--warmup 3] [--intervals 1,5,30]
                               [--keys 10000,1000000,5000000] [--size-interval 2]
                               [--json FIGURES.json]
                               [--skip modes,sizes,kill] [--work-dir DIR] [--keep]

In one run, on Heron's word count (``bench/projects/wordcount_bench``: one spout task
picking seeded words from a 175,000-word vocabulary, fields grouping, two counting tasks
that keep a map and emit nothing per word, two containers; real processes through
``engine.common.local_run.HeronLocalRun``):

1. **The word count in each reliability mode**, each for ``--duration`` seconds after a
   ``--warmup``: at-most-once (``wordcount_bench_heron``, acking off), at-least-once
   (``wordcount_bench_reliable``, one acker, ``topology.max.spout.pending`` 1,024), and
   effectively-once (``wordcount_bench_stateful``: the spout keeps its position in state,
   the counting tasks their counts) with a checkpoint every 1, 5 and 30 s. Figures:
   words/s (the counting tasks' ``__execute-count`` over the window, from the Topology
   Master), and CPU seconds per million words (psutil's user + system time of every
   process of the run over the window, divided by the words). The Topology Master
   starts a checkpoint as processing starts and then every interval, so a window shorter
   than the interval may hold none: the table says how many it held.
2. **Checkpoint duration and bytes for 10,000, 1,000,000 and 5,000,000 keys**
   (``wordcount_bench_checkpoint``: one counting task, pre-filled in ``initialize`` with
   that many keys, the spout at ``--size-rate`` words/s from a vocabulary of 100 words, so
   the state holds N keys and at most 100 more; a checkpoint every ``--size-interval``
   s, 2 by default), read from
   the engine: the Topology Master's ``__checkpoint-last-duration-ms`` (start to globally
   consistent) and ``__checkpoint-last-bytes``, and the task's own ``__checkpoint-save-ms``
   (flush, ``pre_save``, encode, write + fsync) once ``--checkpoints`` checkpoints have
   completed. Then the same storage path is timed step by step in the bench's own
   process (gathering the keys and values through the ``State`` mapping, the
   serializer, ``store``, ``load``, ``decode_state``) to show where the time goes.
3. **Recovery after ``kill -9``** of a counting bolt instance (effectively-once, a
   checkpoint every ``--kill-interval`` s, after ``--kill-settle`` s of counting and two
   checkpoints): the time from the kill until the Topology Master's ``__restores`` is
   seen higher (polled every 0.1 s), until the restarted task counts its first word
   after its restore (the task writes the time and what its restored state held, see
   ``wordbench/stateful.py``), and until the Topology Master's metrics show it counting
   (words/s above zero; metrics are published once a second); and the restore's own
   ``__restore-last-ms`` (Topology Master) and ``__restore-ms`` (the task).

4. **Keyed state rescaled 1 -> 4 -> 2** (issue 30), for ``--rescale-keys`` keys
   (1,000,000 and 5,000,000): the time and bytes to save the keyed state at one
   parallelism and restore it at the next, every new task reading only the key groups it
   owns (``bench/keyed_state_runs.py``, on the engine's storage path, in this process).
5. **Incremental against full checkpoints** of ``--churn-keys`` keys (1,000,000) when
   ``--churn`` of them (1% and 10%) change between checkpoints: bytes and time of each.

Goals (issue 29): effectively-once at least as fast as at-least-once (no acks to pay
for); a 1,000,000-key checkpoint under 2 s (the Topology Master's duration).

The machine is shared: figures are noisy. A live status line shows progress; a summary
table ends the run; ``--json`` writes every figure to a file. Exit status 0 when every
figure was measured, 1 otherwise, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
PROJECT_SRC = ROOT / "bench" / "projects" / "wordcount_bench" / "src"
if str(PROJECT_SRC) not in sys.path:
    sys.path.insert(0, str(PROJECT_SRC))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from bench.checkpoint_runs import (  # noqa: E402
    BenchError,
    KillFigures,
    ModeFigures,
    SizeFigures,
    aggregate,
    as_json,
    run_kill,
    run_mode,
    run_size,
)
from bench.keyed_state_runs import ChurnFigures, RescaleFigures, churn, rescale  # noqa: E402

#: effectively-once words/s at least this share of at-least-once's
GOAL_EO_VS_ALO = 1.0
#: a checkpoint of this many keys ...
GOAL_KEYS = 1_000_000
#: ... completes within this many ms
GOAL_CHECKPOINT_MS = 2000.0
PARTS = ("modes", "sizes", "kill", "rescale", "churn")


def _list(kind: Callable[[str], Any]) -> Callable[[str], list]:
    def parse(text: str) -> list:
        try:
            return [kind(x) for x in text.split(",") if x.strip()]
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc
    return parse


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=20.0,
                   help="seconds each word-count mode is measured (default 20)")
    p.add_argument("--warmup", type=float, default=3.0,
                   help="seconds from the first counted word to the window (default 3)")
    p.add_argument("--rounds", type=int, default=1,
                   help="measure every mode this many times, interleaved, and report the "
                        "medians (default 1; more on a busy machine)")
    p.add_argument("--intervals", type=_list(float), default=[1.0, 5.0, 30.0],
                   help="effectively-once checkpoint intervals, s (default 1,5,30)")
    p.add_argument("--keys", type=_list(int), default=[10_000, 1_000_000, 5_000_000],
                   help="state sizes of the checkpoint figures (default 10000,1000000,5000000)")
    p.add_argument("--checkpoints", type=int, default=2,
                   help="checkpoints to complete per state size; the last is reported")
    p.add_argument("--size-interval", type=float, default=2.0,
                   help="checkpoint interval of the state-size runs, s (default 2)")
    p.add_argument("--size-rate", type=float, default=20_000,
                   help="words/s the spout offers in the state-size runs (default 20000)")
    p.add_argument("--kill-interval", type=float, default=1.0,
                   help="checkpoint interval of the kill -9 run, s (default 1)")
    p.add_argument("--kill-settle", type=float, default=5.0,
                   help="seconds of counting before the kill (default 5)")
    p.add_argument("--max-pending", type=int, default=1024,
                   help="topology.max.spout.pending of the at-least-once run (default 1024)")
    p.add_argument("--workers", type=int, default=2, help="containers (default 2)")
    p.add_argument("--rescale-keys", type=_list(int), default=[1_000_000, 5_000_000],
                   help="keyed-state sizes rescaled 1 -> 4 -> 2 (default 1000000,5000000)")
    p.add_argument("--churn-keys", type=int, default=1_000_000,
                   help="keys of the incremental-checkpoint figures (default 1000000)")
    p.add_argument("--churn", type=_list(float), default=[0.01, 0.10],
                   help="shares of the keys changed between checkpoints (default 0.01,0.1)")
    p.add_argument("--skip", type=_list(str), default=[],
                   help=f"parts not to run: {','.join(PARTS)}")
    p.add_argument("--json", metavar="PATH", help="write every figure to this file")
    p.add_argument("--work-dir", type=Path,
                   help="where the runs' working dirs go (default: a temporary dir)")
    p.add_argument("--keep", action="store_true",
                   help="keep the working dirs (logs) after a clean run")
    args = p.parse_args(argv)
    bad = set(args.skip) - set(PARTS)
    if bad:
        p.error(f"--skip: unknown part(s) {sorted(bad)}; choose from {', '.join(PARTS)}")
    if args.duration <= 0 or args.warmup < 0 or not args.intervals or not args.keys \
            or args.checkpoints < 1 or args.rounds < 1 or min(args.keys) < 1 \
            or min(args.intervals) <= 0 or args.size_interval <= 0 or args.kill_interval <= 0:
        p.error("--duration, --intervals, --keys, --checkpoints, --size-interval and "
                "--kill-interval must be positive")
    return args


# -- goals and the summary ------------------------------------------------------------------

def evaluate_goals(modes: Sequence[ModeFigures], sizes: Sequence[SizeFigures]) -> list[dict]:
    """Each goal with the figure it is judged on and whether it is met (None: not
    measured)."""
    goals = []
    alo = next((m for m in modes if m.reliability == "at-least-once"), None)
    for m in modes:
        if m.reliability != "effectively-once":
            continue
        ratio = m.words_per_s / alo.words_per_s if alo else None
        goals.append({"goal": f"{m.mode}: words/s >= at-least-once's",
                      "figure": None if ratio is None else f"{ratio:.2f}x at-least-once",
                      "value": ratio, "met": None if ratio is None else ratio >= GOAL_EO_VS_ALO})
    size = next((s for s in sizes if s.keys == GOAL_KEYS), None)
    goals.append({"goal": f"a {GOAL_KEYS:,}-key checkpoint under {GOAL_CHECKPOINT_MS / 1000:g} s",
                  "figure": None if size is None else f"{size.checkpoint_ms:,.0f} ms",
                  "value": None if size is None else size.checkpoint_ms,
                  "met": None if size is None else size.checkpoint_ms < GOAL_CHECKPOINT_MS})
    return goals


def _mark(met: bool | None) -> str:
    return {True: "[green]met[/]", False: "[red]not met[/]", None: "[yellow]not measured[/]"}[met]


def _n(value: float | None, fmt: str = ",.0f") -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else format(value, fmt)


def print_keyed(console: Console, rescales: Sequence[RescaleFigures],
                churns: Sequence[ChurnFigures]) -> None:
    if rescales:
        t = Table(title="Keyed state rescaled (save at the old parallelism, restore at the "
                        "new: every task reads only the key groups it owns)")
        for col in ("keys", "step", "save s", "bytes written (MB)", "restore s (all tasks)",
                    "slowest task's restore s"):
            t.add_column(col, justify="right", no_wrap=True)
        for r in rescales:
            for s in r.steps:
                t.add_row(f"{r.keys:,}", f"{s.before} -> {s.after}", f"{s.save_secs:.2f}",
                          f"{s.save_bytes / 2**20:,.1f}", f"{s.restore_secs:.2f}",
                          f"{s.slowest_task_restore_secs:.2f}")
        console.print(t)
    if churns:
        t = Table(title="Incremental against full checkpoints of keyed state")
        for col in ("keys", "changed", "full MB", "full s", "incremental MB", "incremental s",
                    "incremental / full"):
            t.add_column(col, justify="right", no_wrap=True)
        for c in churns:
            t.add_row(f"{c.keys:,}", f"{c.churn:.0%}", f"{c.full_bytes / 2**20:,.1f}",
                      f"{c.full_secs:.2f}", f"{c.incremental_bytes / 2**20:,.2f}",
                      f"{c.incremental_secs:.2f}", f"{c.ratio:.1%}")
        console.print(t)


def print_summary(console: Console, modes: Sequence[ModeFigures],
                  sizes: Sequence[SizeFigures], kill: KillFigures | None,
                  goals: Sequence[dict], errors: Sequence[str]) -> None:
    alo = next((m for m in modes if m.reliability == "at-least-once"), None)
    if modes:
        rounds = max(m.rounds for m in modes)
        title = "Heron's word count: words/s and CPU per word, by reliability mode"
        if rounds > 1:
            title += f" (medians of {rounds} interleaved rounds; each round's in brackets)"
        t = Table(title=title)
        for col in ("mode", "words/s", "CPU s / M words", "vs at-least-once", "window s",
                    "load avg", "checkpoints in window", "last checkpoint"):
            t.add_column(col, justify="left" if col == "mode" else "right", no_wrap=True)
        for m in modes:
            ckpt = "-" if m.checkpoints is None else \
                f"{m.checkpoints}" + (f" ({m.abandoned} abandoned)" if m.abandoned else "")
            last = "-" if m.checkpoint_ms is None or not m.checkpoint_bytes else \
                f"{m.checkpoint_ms:,} ms, {m.checkpoint_bytes / 2**20:,.1f} MB"
            rate, cpu = _n(m.words_per_s), _n(m.cpu_s_per_million, ".2f")
            if m.rounds > 1:
                rate += " [" + " ".join(_n(r) for r in m.round_words_per_s) + "]"
                cpu += " [" + " ".join(_n(r, ".2f") for r in m.round_cpu_s_per_million) + "]"
            t.add_row(m.mode, rate, cpu,
                      f"{m.words_per_s / alo.words_per_s:.2f}x" if alo else "-",
                      _n(m.window_s, ".1f"), _n(m.load_avg, ".1f"), ckpt, last)
        console.print(t)
    if sizes:
        t = Table(title="Checkpoint of one counting task pre-filled with N keys "
                        "(engine figures; then the storage path timed in this process, ms)")
        for col in ("keys", "checkpoint ms", "bytes (MB)", "task save ms", "task RSS MB",
                    "gather", "dumps", "encode", "store", "load", "decode"):
            t.add_column(col, justify="right", no_wrap=True)
        for s in sizes:
            d = s.direct
            t.add_row(f"{s.keys:,}", _n(s.checkpoint_ms), _n(s.checkpoint_bytes / 2**20, ",.1f"),
                      _n(s.task_save_ms), _n(s.task_rss_mb), *(
                          _n(d.get(k)) for k in ("gather_ms", "dumps_ms", "encode_ms",
                                                 "store_ms", "load_ms", "decode_ms")))
        console.print(t)
    if kill is not None:
        t = Table(title=f"kill -9 of a counting bolt instance ({kill.killed}), effectively-once, "
                        f"a checkpoint every {kill.interval_s:g} s")
        t.add_column("figure")
        t.add_column("value", justify="right")
        t.add_row("kill -> Topology Master's __restores higher", f"{kill.restore_seen_s:.2f} s")
        t.add_row("kill -> killed task counts again (its first word, its clock)",
                  f"{kill.first_word_s:.2f} s")
        t.add_row("kill -> words/s above zero in the metrics (published 1/s)",
                  f"{kill.metrics_counting_s:.2f} s")
        t.add_row("restore (__restore-last-ms, Topology Master)", f"{kill.restore_last_ms:,} ms")
        t.add_row("the task's own restore (__restore-ms)", f"{_n(kill.task_restore_ms, ',.1f')} ms")
        t.add_row("state restored (keys / words counted)",
                  f"{kill.restored_keys:,} / {kill.restored_words:,} from "
                  f"{kill.restored_checkpoint}")
        t.add_row("words/s before the kill", _n(kill.words_per_s_before))
        console.print(t)
    if goals:
        console.print("[bold]Goals (issue 29)[/]")
        for g in goals:
            console.print(f"  {g['goal']}: {g['figure'] or '-'}  {_mark(g['met'])}")
    for error in errors:
        console.print(f"[bold red]error:[/] {error}")


# -- main -----------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    # without a terminal (a log, a test), wide enough that no figure wraps
    console = Console(width=None if sys.stdout.isatty() else 220)
    base = Path(args.work_dir or tempfile.mkdtemp(prefix="bench-checkpoint-")).resolve()
    base.mkdir(parents=True, exist_ok=True)
    #: mode -> its rounds' figures; "latest": every round in the order run
    mode_rounds: dict[str, list[ModeFigures]] = {}
    sizes: list[SizeFigures] = []
    kill: KillFigures | None = None
    rescales: list[RescaleFigures] = []
    churns: list[ChurnFigures] = []
    errors: list[str] = []
    began = time.monotonic()
    runs: list[tuple[str, Callable[[Callable[[str], None]], Any]]] = []
    if "modes" not in args.skip:
        common = dict(duration=args.duration, warmup=args.warmup, workers=args.workers,
                      max_pending=args.max_pending)
        plan = [("at-most-once", None), ("at-least-once", None)] + \
            [("effectively-once", i) for i in args.intervals]
        for r in range(args.rounds):  # interleaved: a busy spell hits every mode alike
            for n, (rel, interval) in enumerate(plan):
                def measure(s: Callable[[str], None], rel: str = rel,
                            interval: float | None = interval, n: int = n, r: int = r) -> None:
                    figures = run_mode(rel, interval, work_dir=base / f"mode-{n}-{r}",
                                       status=s, **common)
                    mode_rounds.setdefault(figures.mode, []).append(figures)
                    mode_rounds.setdefault("latest", []).append(figures)
                runs.append((f"mode-{n}-{r}", measure))
    if "sizes" not in args.skip:
        for keys in args.keys:
            runs.append((f"size-{keys}", lambda s, keys=keys: sizes.append(run_size(
                keys, checkpoints=args.checkpoints, interval=args.size_interval,
                rate=args.size_rate, workers=args.workers, work_dir=base / f"size-{keys}",
                status=s))))
    if "kill" not in args.skip:
        def do_kill(s: Callable[[str], None]) -> None:
            nonlocal kill
            kill = run_kill(interval=args.kill_interval, settle=args.kill_settle,
                            workers=args.workers, work_dir=base / "kill", status=s)
        runs.append(("kill", do_kill))
    if "rescale" not in args.skip:
        for keys in args.rescale_keys:
            runs.append((f"rescale-{keys}", lambda s, keys=keys: rescales.append(rescale(keys))))
    if "churn" not in args.skip:
        for share in args.churn:
            runs.append((f"churn-{share:g}", lambda s, share=share: churns.append(
                churn(args.churn_keys, share))))

    with console.status("starting") as live:
        for i, (name, fn) in enumerate(runs, 1):
            def status(text: str, i: int = i) -> None:
                live.update(f"[{i}/{len(runs)}, {time.monotonic() - began:.0f}s] {text}")
            status(name)
            try:
                fn(status)
            except BenchError as exc:
                errors.append(f"{name}: {exc}")
                console.print(f"[red]{name} failed:[/] {exc}")
                continue
            except KeyboardInterrupt:
                errors.append(f"{name}: interrupted")
                break
            console.print(f"done: {_done_line(name, mode_rounds, sizes, kill, rescales, churns)}")

    modes = [aggregate(rounds) for mode, rounds in mode_rounds.items() if mode != "latest"]
    goals = evaluate_goals(modes, sizes)
    console.print()
    print_summary(console, modes, sizes, kill, goals, errors)
    print_keyed(console, rescales, churns)
    console.print(f"bench took {time.monotonic() - began:.0f} s")
    missing = _missing(args, modes, sizes, kill, rescales, churns)
    errors += [f"not measured: {m}" for m in missing if not any(m in e for e in errors)]
    if args.json:
        figures = {"ok": not errors, "seconds": time.monotonic() - began,
                   "settings": {k: (str(v) if isinstance(v, Path) else v)
                                for k, v in vars(args).items()},
                   "modes": as_json(modes), "sizes": as_json(sizes),
                   "kill": as_json(kill) if kill is not None else None,
                   "rescale": as_json(rescales), "churn": as_json(churns),
                   "goals": goals, "errors": errors}
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
        console.print(f"figures: {args.json}")
    if errors or args.keep or args.work_dir:
        console.print(f"working dirs (logs) kept in {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if errors else 0


def _done_line(name: str, mode_rounds: dict[str, list[ModeFigures]],
               sizes: Sequence[SizeFigures], kill: KillFigures | None,
               rescales: Sequence[RescaleFigures] = (),
               churns: Sequence[ChurnFigures] = ()) -> str:
    """One line for a run just finished (the log of a run without a terminal)."""
    if name.startswith("rescale-") and rescales:
        r = rescales[-1]
        return f"{r.keys:,} keys rescaled: " + "; ".join(
            f"{s.before} -> {s.after} save {s.save_secs:.2f} s, restore {s.restore_secs:.2f} s"
            for s in r.steps)
    if name.startswith("churn-") and churns:
        c = churns[-1]
        return (f"{c.keys:,} keys, {c.churn:.0%} changed: incremental {c.incremental_bytes:,} "
                f"bytes against full {c.full_bytes:,} ({c.ratio:.1%})")
    if name.startswith("mode-") and mode_rounds:
        m = mode_rounds["latest"][-1]
        return (f"{m.mode}: {m.words_per_s:,.0f} words/s, {m.cpu_s_per_million:.2f} CPU s/M "
                f"words (load average {m.load_avg:.1f})")
    if name.startswith("size-") and sizes:
        s = sizes[-1]
        return (f"{s.keys:,} keys: checkpoint {s.checkpoint_ms:,.0f} ms, "
                f"{s.checkpoint_bytes:,} bytes, task save {s.task_save_ms:,.0f} ms")
    if name == "kill" and kill is not None:
        return (f"kill -9: restore seen after {kill.restore_seen_s:.2f} s, counting again "
                f"after {kill.first_word_s:.2f} s")
    return name


def _missing(args: argparse.Namespace, modes: Sequence[ModeFigures],
             sizes: Sequence[SizeFigures], kill: KillFigures | None,
             rescales: Sequence[RescaleFigures] = (),
             churns: Sequence[ChurnFigures] = ()) -> list[str]:
    out = []
    if "modes" not in args.skip:
        wanted = ["at-most-once", "at-least-once"] + \
            [f"effectively-once, every {i:g} s" for i in args.intervals]
        out += [w for w in wanted if w not in {m.mode for m in modes}]
    if "sizes" not in args.skip:
        out += [f"{k:,} keys" for k in args.keys if k not in {s.keys for s in sizes}]
    if "kill" not in args.skip and kill is None:
        out.append("kill -9")
    if "rescale" not in args.skip:
        out += [f"rescale of {k:,} keys" for k in args.rescale_keys
                if k not in {r.keys for r in rescales}]
    if "churn" not in args.skip:
        out += [f"{c:.0%} churn" for c in args.churn if c not in {x.churn for x in churns}]
    return out


if __name__ == "__main__":
    sys.exit(main())
