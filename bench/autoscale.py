"""Auto-scaling benchmark: a load step (offered rate x4, then back) on the Health
Manager's end-to-end project, measured from outside the topology.

    python bench/autoscale.py [--topology autoscale|stateful] [--base-rate 150]
                              [--factor 4] [--warmup 15] [--phase-timeout 150]
                              [--quiet 10] [--chart bench/autoscale.png] [--json] [--keep]

The project is ``tests/e2e/heron/projects/autoscale`` (the one
``tests/engine/healthmgr/test_e2e_autoscale.py`` drives): a spout offering the rate this
script writes to a file, a shuffle-grouped bolt ``slow`` sleeping 5 ms per tuple (about
200 tuples/s per instance) starting at parallelism 1, and a sink. Its config turns the
Health Manager on with test settings: interval 2 s, window 10 s, wait 15 s after an
action, at most 6 instances. It is submitted with ``heron submit local`` into a
temporary ``HERON_HOME`` and killed at the end.

Phases: the base rate until the sink counts tuples, ``--warmup`` seconds more, then the
rate x ``--factor`` (step up) until settled, then the base rate again (step down) until
settled. A phase has settled when there has been no backpressure for ``--quiet``
seconds, the sink counts at least 90% of the offered rate (5 s mean), and no Health
Manager action came for the policy's wait + 5 s (``--phase-timeout`` bounds it). Once a second the
script samples:

- **backpressure**: the ms per second the Stream Managers spent in backpressure caused
  by any instance (``__time_spent_back_pressure_by_compid/<instance>``, the metric the
  Health Manager reads), from the Topology Master, as the tracker asks it; a sample
  above 20 ms/s (Heron's noise filter) is backpressure;
- **counted rate**: new distinct ids the sink wrote per second (what the topology
  really delivered; replays are not counted twice), plotted as a 5 s moving average;
- **parallelism** of ``slow`` in the physical plan, and the Health Manager's records
  (``healthmgr/<name>`` in the state manager, as ``heron health`` reads them).

Printed: for each step, the time from the step to the start of the stretch without
backpressure that ended the phase (0 when there was none), the time until the sink
counted 90% of the offered rate, the actions taken (applied,
and any held or failed), the peak and final parallelism. The chart (a PNG drawn with
matplotlib's Agg backend: the ``bench`` extra, ``pip install -e '.[bench]'``) shows
offered rate, counted rate and parallelism over time, with the steps and actions as
dashed lines.

With ``--topology stateful`` the same load step runs on the stateful word count instead
(``tests/e2e/heron/projects/stateful/topologies/keyed_autoscale.py``, the topology of
``tests/engine/healthmgr/test_e2e_stateful_autoscale.py``): effectively-once, a spout
offering words of a fixed corpus at the rate this script writes (its position in the
corpus is its state), a counting bolt ``count`` keeping its counts in keyed state
(fields-grouped on the word, 5 ms per word, from parallelism 1) and a two-phase-commit
file sink; the same Health Manager settings. Each scaling action resizes ``count`` with
its state: a checkpoint, a rollback, each new task restoring the key groups it owns. The
counted rate is then the (word, count) records the sink *committed* per second (each
word counted exactly once is one record; they appear as checkpoints complete), and at
the end the committed records are checked against the corpus: they must be every
running count of the first N words exactly once (``counts_exact``). The chart goes to
``bench/autoscale-stateful.png`` unless ``--chart`` says otherwise.

Exit status 0 when both phases settled, 1 otherwise (the figures are still printed).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.series import moving_average  # noqa: E402
from compat.connectors.files import committed_files  # noqa: E402
from engine.common.launch import StateManagerSpec  # noqa: E402
from engine.healthmgr.store import KIND, records_of  # noqa: E402
from engine.tools.tracker.errors import TrackerError  # noqa: E402
from engine.tools.tracker.service import Tracker, TrackerSettings  # noqa: E402

PROJECT = ROOT / "tests" / "e2e" / "heron" / "projects" / "autoscale"
NAME = "e2e_autoscale"
COMPONENT = "slow"
#: --topology stateful: the keyed word count (effectively-once) and its counting bolt
STATEFUL_PROJECT = ROOT / "tests" / "e2e" / "heron" / "projects" / "stateful"
STATEFUL_NAME = "keyed_autoscale"
STATEFUL_COMPONENT = "count"
#: the stateful spout's corpus: more words than any run offers
STATEFUL_WORDS = 10_000_000


@dataclass(frozen=True)
class Target:
    """What ``--topology`` chooses: the project, the topology, the bolt the Health Manager
    scales, the default chart and what the chart's title says of the topology."""

    project: Path
    name: str
    component: str
    chart: Path
    title: str


TOPOLOGIES = {
    "autoscale": Target(PROJECT, NAME, COMPONENT, ROOT / "bench" / "autoscale.png",
                        "bolt 5 ms per tuple"),
    "stateful": Target(STATEFUL_PROJECT, STATEFUL_NAME, STATEFUL_COMPONENT,
                       ROOT / "bench" / "autoscale-stateful.png",
                       "stateful word count, keyed counts 5 ms per word, effectively-once"),
}
BP_PREFIX = "__time_spent_back_pressure_by_compid/"
#: Heron's BackPressureDetector.noiseFilterMillis: below it a second is not backpressure
NOISE_MS = 20.0
#: the project's health.policy.post.action.wait.ms, and a margin to see the next poll
WAIT_SECS = 15.0 + 5.0
#: a phase has not settled while the sink counts less than this share of the offered rate
DELIVERED = 0.9


@dataclass
class Sample:
    t: float
    offered: float
    counted: float
    bp_ms: float | None
    parallelism: int


@dataclass
class Phase:
    name: str
    start: float
    end: float = 0.0
    settled: bool = False
    no_bp_after: float | None = None
    #: first time the 5 s mean counted rate reached DELIVERED x the offered rate
    delivered_after: float | None = None
    actions: list[dict] = field(default_factory=list)


class SinkCounter:
    """Distinct ids the sink wrote, read incrementally from its files."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.offsets: dict[Path, int] = {}
        self.partial: dict[Path, bytes] = {}
        self.seen: set[int] = set()

    @property
    def count(self) -> int:
        return len(self.seen)

    def poll(self) -> int:
        """How many new distinct ids since the last call."""
        before = len(self.seen)
        for path in self.out.glob("sink-*.txt"):
            with open(path, "rb") as fh:
                fh.seek(self.offsets.get(path, 0))
                data = self.partial.pop(path, b"") + fh.read()
                self.offsets[path] = fh.tell()
            lines = data.split(b"\n")
            if lines[-1]:
                self.partial[path] = lines[-1]  # a line being written
            for line in lines[:-1]:
                n, _, _ = line.partition(b" ")
                if n:
                    self.seen.add(int(n))
        return len(self.seen) - before


class CommittedCounter:
    """The (word, count) records the stateful word count's file sink committed
    (``part-*.jsonl``: a file appears, complete, when its checkpoint is consistent, and
    never changes), read file by file. Each word counted exactly once is one record."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.read: set[Path] = set()
        self.records: collections.Counter = collections.Counter()

    @property
    def count(self) -> int:
        return sum(self.records.values())

    def poll(self) -> int:
        """How many records were committed since the last call."""
        before = self.count
        for path in committed_files(self.out):
            if path in self.read:
                continue
            self.read.add(path)
            for line in path.read_text(encoding="utf-8").splitlines():
                if line:
                    word, count = json.loads(line)
                    self.records[(word, count)] += 1
        return self.count - before

    def exact(self) -> bool:
        """Whether the records are every running count of the corpus' first ``count``
        words exactly once (a consistent checkpoint covers a prefix of the corpus)."""
        sys.path.insert(0, str(STATEFUL_PROJECT / "src"))
        try:
            from stateful_autoscale_parts import corpus_counts
        finally:
            sys.path.remove(str(STATEFUL_PROJECT / "src"))
        wanted = collections.Counter((word, k) for word, total
                                     in corpus_counts(self.count).items()
                                     for k in range(1, total + 1))
        return wanted == self.records


def heron(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "HERON_HOME": str(home)}
    env.pop("HERON_MODULE_OVERRIDES", None)
    return subprocess.run([sys.executable, "-c", "from engine.tools.cli.main import main; main()",
                           *args], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False)


class Sampler:
    def __init__(self, home: Path, out: Path, rate_file: Path, name: str = NAME,
                 component: str = COMPONENT,
                 sink: SinkCounter | CommittedCounter | None = None) -> None:
        self.rate_file = rate_file
        self.name = name
        self.component = component
        self.tracker = Tracker(StateManagerSpec(kind="local", root=str(home / "state")),
                               TrackerSettings(poll_interval=0, tm_timeout=2.0, home=home))
        self.tracker.start(poll=False)
        self.sink = sink if sink is not None else SinkCounter(out)
        self.samples: list[Sample] = []
        self.last_time = time.time()
        self.last_bp: dict[tuple[str, str], float] = {}
        self.records: list[dict] = []

    def close(self) -> None:
        self.tracker.stop()

    def sample(self) -> Sample:
        now = time.time()
        dt = max(now - self.last_time, 1e-3)
        self.last_time = now
        counted = self.sink.poll() / dt
        bp_ms: float | None = None
        parallelism = self.samples[-1].parallelism if self.samples else 0
        try:
            record = self.tracker.record(self.name, lazy=True)
            pplan = record.node("pplans")
            if pplan is not None:
                parallelism = sum(1 for i in pplan.instances
                                  if i.info.component_name == self.component)
            snap = self.tracker.snapshot(record)
            total, current = 0.0, {}
            for stmgr, values in snap.values.items():
                for name, text in values.items():
                    if name.startswith(BP_PREFIX):
                        value = float(text)
                        current[(stmgr, name)] = value
                        before = self.last_bp.get((stmgr, name))
                        if before is not None:
                            total += value - before if value >= before else value
            if self.last_bp:
                bp_ms = total / dt
            self.last_bp = current
            self.records = records_of(self.tracker.read(KIND, self.name))
        except (TrackerError, ValueError, OSError):
            self.last_bp = {}  # a Topology Master that did not answer: start over
        try:
            offered = float(self.rate_file.read_text().strip() or 0)
        except (OSError, ValueError):
            offered = 0.0
        out = Sample(now, offered, counted, bp_ms, parallelism)
        self.samples.append(out)
        return out

    def actions(self) -> list[dict]:
        return [r for r in self.records if r.get("type") == "action"]


def settle(sampler: Sampler, phase: Phase, quiet: float, timeout: float,
           done: Callable[[], bool] = lambda: True) -> None:
    """Sample once a second until the phase settles (see the module docstring)."""
    quiet_since: float | None = None
    while True:
        began = time.monotonic()
        s = sampler.sample()
        if s.bp_ms is not None and s.bp_ms > NOISE_MS:
            quiet_since = None
        elif s.bp_ms is not None and quiet_since is None:
            quiet_since = s.t
        acts = [a for a in sampler.actions() if a["time"] >= phase.start]
        last_action = max((a["time"] for a in acts), default=phase.start)
        recent = [x.counted for x in sampler.samples[-5:]]
        delivering = sum(recent) / len(recent) >= DELIVERED * s.offered
        if delivering and phase.delivered_after is None:
            phase.delivered_after = s.t - phase.start
        if (quiet_since is not None and s.t - quiet_since >= quiet and delivering
                and s.t - last_action >= WAIT_SECS and s.t - phase.start >= WAIT_SECS
                and done()):
            phase.settled = True
        if phase.settled or s.t - phase.start >= timeout:
            phase.end = s.t
            phase.actions = acts
            phase.no_bp_after = (max(quiet_since, phase.start) - phase.start
                                 if quiet_since is not None else None)
            return
        time.sleep(max(0.0, 1.0 - (time.monotonic() - began)))


#: the chart's colours: offered rate and load steps, counted rate, parallelism, actions
BLUE, ORANGE, GREEN, RED = "#1f4e79", "#d9480f", "#1f6f43", "#b42318"


def draw(samples: list[Sample], phases: list[Phase], actions: list[dict], path: Path,
         title: str, size: tuple[int, int] = (900, 420)) -> None:
    """The chart: offered and counted rate (left axis), the parallelism of the scaled
    bolt (a step line, right axis) over seconds from the first sample; the load steps (blue)
    and the Health Manager's applied actions (red) as dashed vertical lines. ``size`` is
    in pixels."""
    t0 = samples[0].t
    ts = [s.t - t0 for s in samples]
    fig = Figure(figsize=(size[0] / 100, size[1] / 100), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    rates = fig.add_subplot()
    rates.plot(ts, [s.offered for s in samples], color=BLUE, linewidth=2, label="offered/s")
    rates.plot(ts, moving_average([s.counted for s in samples], 5), color=ORANGE,
               linewidth=2, label="counted/s (5 s avg)")
    instances = rates.twinx()
    instances.step(ts, [s.parallelism for s in samples], where="post", color=GREEN,
                   linewidth=2, label="parallelism")
    for p in phases:
        rates.axvline(p.start - t0, color=BLUE, linewidth=1.5, linestyle=(0, (4, 4)))
    for a in actions:
        if a.get("status") == "applied":
            rates.axvline(a["time"] - t0, color=RED, linewidth=1.5, linestyle=(0, (4, 4)))
    rates.set_xlim(0, max(ts[-1], 1.0))
    rates.set_ylim(bottom=0)
    instances.set_ylim(0, max(4, max(s.parallelism for s in samples) + 1))
    instances.yaxis.set_major_locator(MaxNLocator(integer=True))
    rates.grid(axis="y", color="#e1e5ea")
    rates.set_title(title, loc="left", fontsize=11)
    rates.set_xlabel("time (s)")
    rates.set_ylabel("tuples/s")
    instances.set_ylabel("instances")
    handles = [*rates.get_lines()[:2], *instances.get_lines(),
               Line2D([], [], color=BLUE, linewidth=1.5, linestyle=(0, (4, 4)),
                      label="load step"),
               Line2D([], [], color=RED, linewidth=1.5, linestyle=(0, (4, 4)),
                      label="Health Manager action")]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles),
               frameon=False, fontsize=9)
    fig.savefig(path)


def leftovers(home: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if str(home) in " ".join(proc.info["cmdline"] or ()) \
                    and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topology", choices=sorted(TOPOLOGIES), default="autoscale",
                        help="the Health Manager's end-to-end topology (default) or the "
                             "stateful word count with keyed counts, effectively-once")
    parser.add_argument("--base-rate", type=float, default=150.0,
                        help="offered tuples/s before and after the step (default 150)")
    parser.add_argument("--factor", type=float, default=4.0, help="the step (default x4)")
    parser.add_argument("--warmup", type=float, default=15.0,
                        help="seconds at the base rate before the step (default 15)")
    parser.add_argument("--quiet", type=float, default=10.0,
                        help="seconds without backpressure that settle a phase (default 10)")
    parser.add_argument("--phase-timeout", type=float, default=150.0,
                        help="longest phase, seconds (default 150)")
    parser.add_argument("--chart", type=Path, default=None,
                        help="the PNG (default bench/autoscale.png, "
                             "bench/autoscale-stateful.png with --topology stateful)")
    parser.add_argument("--json", action="store_true", help="the figures as JSON on stdout")
    parser.add_argument("--keep", action="store_true", help="keep the HERON_HOME and logs")
    args = parser.parse_args(argv)
    if args.base_rate <= 0 or args.factor <= 1:
        parser.error("--base-rate must be > 0 and --factor > 1")
    args.target = TOPOLOGIES[args.topology]
    if args.chart is None:
        args.chart = args.target.chart
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    target: Target = args.target
    stateful = args.topology == "stateful"
    home = Path(tempfile.mkdtemp(prefix="bench-autoscale-"))
    out, rate_file, committed = home / "out", home / "rate", home / "committed"
    out.mkdir()
    rate_file.write_text(f"{args.base_rate:g}")
    say = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    extra = (["-o", f"e2e.words={STATEFUL_WORDS}",
              "-o", f"heron.connectors.file.sink.dir={committed}"] if stateful else [])
    submitted = heron(home, "submit", "local", str(target.project), "-n", target.name,
                      "-o", f"e2e.out={out}", "-o", f"e2e.rate_file={rate_file}", *extra)
    if submitted.returncode != 0:
        print(submitted.stdout + submitted.stderr, file=sys.stderr)
        return 1
    say(f"submitted {target.name} into {home}; base rate {args.base_rate:g}/s")
    sampler = Sampler(home, out, rate_file, target.name, target.component,
                      CommittedCounter(committed) if stateful else None)
    phases: list[Phase] = []
    try:
        deadline = time.time() + 90
        while not sampler.sink.count and time.time() < deadline:  # the topology is up
            sampler.sample()
            time.sleep(1.0)
        if not sampler.sink.count:
            say("the sink never counted a tuple")
            return 1
        warm = time.time() + args.warmup
        while time.time() < warm:
            sampler.sample()
            time.sleep(1.0)

        up = Phase(f"step up x{args.factor:g}", time.time())
        phases.append(up)
        rate_file.write_text(f"{args.base_rate * args.factor:g}")
        say(f"offered {args.base_rate * args.factor:g}/s")
        settle(sampler, up, args.quiet, args.phase_timeout)
        peak_after_up = max(s.parallelism for s in sampler.samples)

        down = Phase("step down", time.time())
        phases.append(down)
        rate_file.write_text(f"{args.base_rate:g}")
        say(f"offered {args.base_rate:g}/s")
        # the step down has settled once the Health Manager has scaled down (or cannot)
        settle(sampler, down, args.quiet, args.phase_timeout,
               done=lambda: any(a["time"] >= down.start and a.get("status") == "applied"
                                for a in sampler.actions())
               or peak_after_up <= 1)
    finally:
        rate_file.write_text("0")
        killed = heron(home, "kill", target.name)
        sampler.close()
        deadline = time.time() + 20
        while leftovers(home) and time.time() < deadline:
            time.sleep(0.5)
        for proc in leftovers(home):  # this run's processes only (their command names home)
            try:
                proc.kill()
            except psutil.Error:
                pass

    samples = sampler.samples
    actions = sampler.actions()
    applied = [a for a in actions if a.get("status") == "applied"]
    steady = [s for s in samples if s.t >= phases[0].start]
    figures = {
        "base_rate": args.base_rate, "step_rate": args.base_rate * args.factor,
        "phases": [{
            "phase": p.name, "settled": p.settled, "seconds": round(p.end - p.start, 1),
            "no_backpressure_after_s": None if p.no_bp_after is None else round(p.no_bp_after, 1),
            "counted_reaches_offered_after_s": (None if p.delivered_after is None
                                                else round(p.delivered_after, 1)),
            "actions": [f"{a['kind']} {a.get('current')}->{a.get('target')} ({a['status']}, "
                        f"{a['diagnosis']}, +{a['time'] - p.start:.0f} s)" for a in p.actions],
            "counted_rate_last_10s": round(sum(s.counted for s in samples
                                               if p.end - 10 <= s.t <= p.end) /
                                           max(1, len([s for s in samples
                                                       if p.end - 10 <= s.t <= p.end])), 1),
        } for p in phases],
        "actions_applied": len(applied), "actions_total": len(actions),
        "peak_parallelism": max((s.parallelism for s in steady), default=0),
        "final_parallelism": samples[-1].parallelism if samples else 0,
        "topology": target.name,
        "killed": killed.returncode == 0,
        "chart": str(args.chart),
    }
    if stateful:
        sampler.sink.poll()  # what the last checkpoints before the kill committed
        figures["words_committed"] = sampler.sink.count
        figures["counts_exact"] = sampler.sink.exact()
    else:
        figures["distinct_ids_counted"] = sampler.sink.count
    if samples:
        draw(samples, phases, actions, args.chart,
             f"auto-scaling: {args.base_rate:g}/s ×{args.factor:g} and back, {target.title}")
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for p in figures["phases"]:
            after = p["no_backpressure_after_s"]
            reached = p["counted_reaches_offered_after_s"]
            print(f"{p['phase']}: no backpressure after "
                  f"{'never' if after is None else f'{after:g} s'}; counted >= "
                  f"{DELIVERED:.0%} of offered after "
                  f"{'never' if reached is None else f'{reached:g} s'}; settled: "
                  f"{p['settled']} in {p['seconds']:g} s; counted "
                  f"{p['counted_rate_last_10s']:g}/s over its last 10 s")
            for a in p["actions"]:
                print(f"  action {a}")
        print(f"actions applied: {figures['actions_applied']} (of {figures['actions_total']} "
              f"recorded); parallelism of {target.component}: peak "
              f"{figures['peak_parallelism']}, final {figures['final_parallelism']}")
        if stateful:
            print(f"words committed: {figures['words_committed']}, every running count "
                  f"exactly once: {figures['counts_exact']}")
        print(f"chart: {args.chart}")
    if args.keep or not all(p.settled for p in phases):
        say(f"kept {home} (logs in {home}/topologies/{target.name}/logs)")
    else:
        shutil.rmtree(home, ignore_errors=True)
    return 0 if (all(p.settled for p in phases) and killed.returncode == 0
                 and figures.get("counts_exact", True)) else 1


if __name__ == "__main__":
    sys.exit(main())
