"""Chaos soak: an at-least-once word count on the heron engine while a monkey ``kill -9``s
a random engine process every few seconds; nothing may be lost.

    python bench/chaos.py [--minutes 30] [--interval 5-20] [--seed 7] [--rate 1000]
                          [--kinds KIND,...] [--chart bench/chaos.png] [--json]
                          [--json-file PATH] [--work-dir DIR] [--keep]

The topology is ``bench/projects/chaos_wordcount`` (components in its
``src/chaos_parts.py``): a spout of 2 tasks reading a fixed, deterministic corpus of
sentences, one partition each, whose position is durable as a Kafka consumer's committed
offset (the highest contiguous acked offset, written to a file with write + fsync +
rename; a restarted spout resumes there and replays everything not yet acked; failed
and timed-out ids are re-emitted), a splitting bolt (2 tasks) and a sink (2 tasks,
fields-grouped on the id) that records each id the first time it arrives, and each
further delivery as a duplicate, in an append-only file per task, de-duplicating across
its own restarts. 2 containers, one acker, message timeout 10 s, max spout pending 1,000,
a Health Manager in container 0 (its policy deactivated: it must not rescale the topology
under the monkey). It is submitted with ``heron submit local`` (the local scheduler
service, the embedded local state manager) into a temporary ``HERON_HOME``.

The monkey. After the topology runs, every ``--interval`` seconds (uniform, seeded) it
kills one process with SIGKILL: each kind once first, in a seeded random order, then a
random kind and a random process of it. Kinds: spout instance, bolt instance, stream
manager, metrics manager, topology master, executor, scheduler (``python -m
engine.scheduler``, the pid file ``scheduler.pid``: the service's supervisor now that the
local scheduler's service is supervised), scheduler service (the service proper,
``--serve``, ``scheduler-service.pid``), health manager; processes are found from the
pid files under the topology's working dir (and command lines naming its launch file).
A kill has **recovered** when the killed process's pid file names a new live process
and the sink records new ids at 80 % of the offered rate or more over 2 s starting after
that (the time is the start of that window); the time until the process alone was back
is reported too. If nothing of the topology is left running and its scheduler does not
come back (nothing restarts the supervisor, the topology's root process: its service and
executors follow it out), the bench does what an operator would, ``heron kill`` and
``heron submit`` again, and says so (``resubmitted``): the spout resumes from its
committed offsets and the sinks from their files, so that is a test of the durability
too. ``--no-resubmit`` leaves it dead instead.

After ``--minutes`` the monkey stops and the spouts are told (a ``stop`` file) to emit
nothing beyond their durable high-water marks; once every partition's committed offset
has reached its mark, every id of the corpus prefix the spouts emitted must be in the
sinks' files (**lost** must be 0), with the corpus's word count. Printed: ids emitted,
acked, recorded, lost, duplicates delivered; recovery time per kind and overall (p50,
p99, max); each kind's RSS and open file descriptors (mean per process) in the first and
last thirds of the run (flat means no leak); a chart (PNG, ``--chart``) of the recorded
ids per second over time with every kill marked. Exit status 0 when nothing was lost,
the topology drained and every kill recovered; 1 otherwise.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
PROJECT = ROOT / "bench" / "projects" / "chaos_wordcount"
if str(PROJECT / "src") not in sys.path:
    sys.path.insert(0, str(PROJECT / "src"))

import psutil  # noqa: E402
from chaos_parts import sentence, split_id  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.live import Live  # noqa: E402

from bench.chaos_monkey import (  # noqa: E402
    KINDS,
    Kill,
    Ledger,
    Monkey,
    Processes,
    Throughput,
    kind_of,
    read_json_file,
    sample_resources,
    wait_gone,
)
from bench.chaos_report import Status, draw, print_summary, recovery_figures, resource_figures  # noqa: E402

NAME = "chaos_wordcount"
PARTITIONS = 2
#: a kill has recovered when the sink records at least this share of the offered rate
#: over a window this long (s)
RESUMED = 0.8
WINDOW = 2.0
POLL = 0.25
RESOURCES_EVERY = 5.0


def heron(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "HERON_HOME": str(home)}
    env.pop("HERON_MODULE_OVERRIDES", None)
    return subprocess.run([sys.executable, "-c", "from engine.tools.cli.main import main; main()",
                           *args], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False)


def parse_interval(text: str) -> tuple[float, float]:
    lo, _, hi = text.partition("-")
    lo_f, hi_f = float(lo), float(hi or lo)
    if lo_f <= 0 or hi_f < lo_f:
        raise argparse.ArgumentTypeError(f"--interval wants LO-HI seconds, 0 < LO <= HI: {text}")
    return lo_f, hi_f


class Soak:
    def __init__(self, args: argparse.Namespace, home: Path, status: Status) -> None:
        self.args = args
        self.home = home
        self.status = status
        self.data = home / "data"
        self.working_dir = home / "topologies" / NAME
        self.processes = Processes(self.working_dir)
        seed = args.seed
        self.ledger = Ledger(self.data, lambda gid, words: words == len(
            sentence(seed, *split_id(gid, PARTITIONS)).split()))
        self.throughput = Throughput()
        self.history: list[tuple[float, int]] = []
        self.history_t: list[float] = []
        self.drain_s: float | None = None
        self.kills: list[Kill] = []
        self.resources = []
        self.resubmits: list[float] = []
        self.notes: list[str] = []
        self.down_since: float | None = None
        self.resubmitting: threading.Thread | None = None
        self.next_resources = 0.0
        self.start = self.monkey_end = 0.0

    # -- the topology ------------------------------------------------------------------
    def submit(self) -> None:
        done = heron(self.home, "submit", "local", str(PROJECT), "-n", NAME,
                     "-o", f"chaos.dir={self.data}", "-o", f"chaos.rate={self.args.rate:g}",
                     "-o", f"chaos.seed={self.args.seed}")
        if done.returncode != 0:
            raise RuntimeError(f"heron submit failed: {done.stdout}{done.stderr}")

    def resubmit(self, now: float) -> None:
        """``heron kill`` and ``heron submit`` in a thread, so that sampling goes on (the
        chart shows the gap) while the monkey waits."""
        self.resubmits.append(now)
        for k in self.kills:
            if k.open:
                k.resubmitted = True

        def run() -> None:
            try:
                heron(self.home, "kill", NAME)
                self.submit()
            except (RuntimeError, subprocess.SubprocessError) as exc:
                self.notes.append(f"resubmitting failed: {exc}")

        self.resubmitting = threading.Thread(target=run, name="resubmit", daemon=True)
        self.resubmitting.start()

    def busy(self) -> bool:
        """The topology is down or being submitted again: the monkey waits."""
        return self.down_since is not None or (self.resubmitting is not None
                                               and self.resubmitting.is_alive())

    # -- one poll ----------------------------------------------------------------------
    def tick(self, now: float) -> None:
        self.ledger.poll()
        self.history.append((now, self.ledger.distinct))
        self.history_t.append(now)
        self.throughput.add(now, self.ledger.distinct)
        if now >= self.next_resources:
            self.next_resources = now + RESOURCES_EVERY
            self.resources.extend(sample_resources(self.processes, now))
        named = self.processes.by_name()
        for k in self.kills:
            if k.open:
                self._follow(k, now, named)
        if self.resubmitting is not None and self.resubmitting.is_alive():
            return
        if not any(p is not None for p in named.values()):
            self.down_since = self.down_since or now
            if (self.args.resubmit and now - self.down_since >= 3.0
                    and any(k.open for k in self.kills)):
                self.resubmit(now)
                self.down_since = None
        else:
            self.down_since = None

    def _follow(self, k: Kill, now: float, named: dict) -> None:
        if k.back_s is None:
            proc = named.get(k.name)
            if proc is not None and proc.pid != k.pid:
                k.back_s = now - k.t
        if k.back_s is not None:
            back_at = k.t + k.back_s
            need = RESUMED * self.args.rate
            # the first WINDOW-long window starting after the process was back in which
            # the sink recorded at >= RESUMED of the offered rate
            i = bisect.bisect_left(self.history_t, back_at - POLL)
            while i < len(self.history):
                t_i, n_i = self.history[i]
                j = bisect.bisect_left(self.history_t, t_i + WINDOW, lo=i + 1)
                if j >= len(self.history):
                    break
                t_j, n_j = self.history[j]
                if (n_j - n_i) / (t_j - t_i) >= need:
                    k.recovered_s = max(k.back_s, t_i - k.t)
                    return
                i += 1
        if now - k.t > self.args.recovery_timeout:
            k.gave_up = True
            self.notes.append(f"the {k.kind} {k.name} killed at +{k.t - self.start:.0f} s did "
                              f"not recover within {self.args.recovery_timeout:g} s "
                              f"(process back: {k.back_s is not None})")

    def kinds_present(self) -> set[str]:
        return {kind_of(n) for n in self.processes.live()}

    # -- phases ------------------------------------------------------------------------
    def wait_running(self, timeout: float = 120.0, grace: float = 45.0) -> bool:
        """Until the sink records ids and a process of every kind asked for runs; a kind
        still missing ``grace`` s after the first id is left out of the run, with a note
        (e.g. an engine whose scheduler service runs unsupervised has no "scheduler
        service")."""
        began = time.time()
        first: float | None = None
        wanted = set(self.args.kinds)
        while time.time() - began < timeout:
            now = time.time()
            self.tick(now)
            missing = wanted - self.kinds_present()
            if self.ledger.distinct > 0 and first is None:
                first = now
            self.status.line(f"starting: {self.ledger.distinct:,} ids recorded; waiting for "
                             f"{', '.join(sorted(missing)) or 'the sink'}")
            if first is not None and (not missing or now - first >= grace):
                if missing:
                    self.args.kinds = [k for k in self.args.kinds if k not in missing]
                    self.notes.append(f"no process of kind {', '.join(sorted(missing))} ran: "
                                      "not killed in this run")
                return True
            time.sleep(POLL)
        return False

    def chaos(self) -> None:
        args = self.args
        rng = random.Random(args.seed)
        monkey = Monkey(rng, args.kinds, args.interval)
        self.start = time.time()
        self.monkey_end = self.start + args.minutes * 60
        monkey.schedule(self.start)
        while True:
            now = time.time()
            if now >= self.monkey_end:
                break
            self.tick(now)
            if now >= monkey.next_at and not self.busy():
                picked = monkey.pick(self.processes.live())
                if picked is None:  # that kind is being restarted: try again in a second
                    monkey.next_at = now + 1.0
                else:
                    kind, name, proc = picked
                    overlapped = any(k.open for k in self.kills)
                    if Monkey.kill(proc):
                        self.kills.append(Kill(now, kind, name, proc.pid, overlapped=overlapped))
                    monkey.schedule(now)
            self._show(now, "chaos")
            time.sleep(max(0.0, POLL - (time.time() - now)))

    def settle(self) -> None:
        """After the monkey: keep the load on until every open kill has recovered (or
        been given up), so the last kills are measured as the others were."""
        while any(k.open for k in self.kills):
            now = time.time()
            self.tick(now)
            self._show(now, "settling")
            time.sleep(POLL)

    def drain(self) -> bool:
        """Stop the spouts at their high-water marks and wait until every partition's
        committed offset reaches it (and every kill has recovered or been given up)."""
        (self.data / "stop").write_text("stop")
        began = time.time()
        while time.time() - began < self.args.drain_timeout:
            now = time.time()
            self.tick(now)
            states = self.spout_states()
            drained = (len(states) == PARTITIONS and all(
                s.get("offset") == s.get("emitted") and s.get("offset") is not None
                for s in states.values()))
            if drained and not any(k.open for k in self.kills):
                self.drain_s = now - began
                self.ledger.poll()
                return True
            acked = sum(s.get("offset", 0) for s in states.values())
            emitted = sum(s.get("emitted", 0) for s in states.values())
            self._show(now, f"draining: {acked:,}/{emitted:,} acked")
            time.sleep(POLL)
        self.drain_s = None
        return False

    def spout_states(self) -> dict[int, dict]:
        return {p: read_json_file(self.data / f"spout-{p}.json") for p in range(PARTITIONS)
                if (self.data / f"spout-{p}.json").exists()}

    def _show(self, now: float, phase: str) -> None:
        elapsed = now - self.start
        last = self.kills[-1] if self.kills else None
        rate = self.throughput.rate_over(5.0, now)
        text = (f"{phase} {elapsed / 60:5.1f}/{self.args.minutes:g} min  "
                f"recorded {self.ledger.distinct:>10,} ids  {rate:7,.0f}/s  "
                f"dup {self.ledger.duplicates:,}  kills {len(self.kills)}")
        if last is not None:
            state = (f"recovered in {last.recovered_s:.1f}s" if last.recovered_s is not None
                     else "recovering")
            text += f" (last: {last.kind} {last.name}, {state})"
        if self.resubmits:
            text += f"  resubmitted {len(self.resubmits)}x"
        if self.busy():
            text += "  [nothing of the topology running: heron kill, heron submit again]"
        self.status.line(text)

    # -- figures -----------------------------------------------------------------------
    def figures(self, drained: bool, chart: Path) -> dict:
        states = self.spout_states()
        emitted = acked = lost = 0
        lost_sample: list[int] = []
        words_expected = 0
        for p in range(PARTITIONS):
            s = states.get(p, {})
            high = int(s.get("emitted", 0))
            emitted += high
            acked += int(s.get("offset", 0))
            for offset in range(high):
                gid = offset * PARTITIONS + p
                if not self.ledger.has(gid):
                    lost += 1
                    if len(lost_sample) < 20:
                        lost_sample.append(gid)
                words_expected += len(sentence(self.args.seed, p, offset).split())
        counters = {k: sum(int(s.get(k, 0)) for s in states.values())
                    for k in ("emits", "replays", "acks", "fails", "starts")}
        beyond = self.ledger.distinct - (emitted - lost)
        recovery = recovery_figures(self.kills)
        every_recovered = all(k.recovered_s is not None for k in self.kills)
        killed_kinds = sorted({k.kind for k in self.kills}, key=lambda k: (k not in KINDS,
                              KINDS.index(k) if k in KINDS else 0, k))
        ids = {
            "emitted": emitted, "acked": acked, "recorded": self.ledger.distinct,
            "lost": lost, "lost_sample": lost_sample, "recorded_beyond_emitted": beyond,
            "duplicates": self.ledger.duplicates + self.ledger.missed_dups,
            "duplicates_missed_by_sink": self.ledger.missed_dups,
            "duplicate_pct": (100 * (self.ledger.duplicates + self.ledger.missed_dups)
                              / max(1, self.ledger.distinct)),
            "tuples_emitted": counters["emits"], "replays_after_restart": counters["replays"],
            "spout_fails": counters["fails"], "spout_starts": counters["starts"],
            "words_counted": self.ledger.words, "words_expected": words_expected,
            "wrong_word_counts": self.ledger.wrong, "torn_lines": self.ledger.torn,
        }
        rates = [v for t, v in self.throughput.per_second if self.start <= t <= self.monkey_end]
        if self.resubmits:
            self.notes.append(
                f"the topology was resubmitted by the bench {len(self.resubmits)} time(s): "
                "after a kill nothing of it was left running (nothing restarts the scheduler "
                "process, the topology's root; its service and executors stop with it)")
        if not drained:
            self.notes.append(f"the topology did not drain within {self.args.drain_timeout:g} s")
        ok = (lost == 0 and drained and every_recovered and ids["wrong_word_counts"] == 0
              and beyond == 0)
        return {
            "minutes": self.args.minutes, "interval_s": list(self.args.interval),
            "seed": self.args.seed, "rate": self.args.rate, "kinds": self.args.kinds,
            "ids": ids, "drained": drained, "drain_s": (None if self.drain_s is None
                                                        else round(self.drain_s, 1)),
            "killed_kinds": killed_kinds,
            "every_kind_killed": set(self.args.kinds) <= set(killed_kinds),
            "every_kill_recovered": every_recovered,
            "recovery": recovery, "resubmits": len(self.resubmits),
            "kills": [{"t_s": round(k.t - self.start, 2), "kind": k.kind, "name": k.name,
                       "back_s": None if k.back_s is None else round(k.back_s, 2),
                       "recovered_s": None if k.recovered_s is None else round(k.recovered_s, 2),
                       "resubmitted": k.resubmitted, "overlapped": k.overlapped}
                      for k in self.kills],
            "resources": resource_figures(self.resources, self.start, self.monkey_end),
            "throughput": {
                "mean_per_s": round(sum(rates) / len(rates), 1) if rates else None,
                "seconds_below_80pct": sum(1 for r in rates if r < RESUMED * self.args.rate),
                "seconds": len(rates)},
            "notes": self.notes, "chart": str(chart), "ok": ok,
        }


def cleanup(home: Path) -> list[str]:
    """Stop this run's topology and anything of it left (processes naming ``home``)."""
    heron(home, "kill", NAME, timeout=60)
    # the engine's processes name their launch file, under <home>/topologies
    needle = str(home / "topologies")
    left = wait_gone(needle, 15)
    for proc in left:
        try:
            proc.kill()
        except psutil.Error:
            pass
    return [f"{p.pid}" for p in wait_gone(needle, 5)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0,
                        help="how long the monkey kills (default 30)")
    parser.add_argument("--interval", type=parse_interval, default=(5.0, 20.0),
                        help="seconds between kills, LO-HI, uniform (default 5-20)")
    parser.add_argument("--seed", type=int, default=7, help="the monkey's and the corpus's")
    parser.add_argument("--rate", type=float, default=1000.0,
                        help="ids/s the spouts offer in all (default 1000)")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"kinds to kill, comma-separated (default all: {', '.join(KINDS)})")
    parser.add_argument("--no-resubmit", dest="resubmit", action="store_false",
                        help="leave a topology that died with nothing running dead")
    parser.add_argument("--recovery-timeout", type=float, default=120.0)
    parser.add_argument("--drain-timeout", type=float, default=180.0)
    parser.add_argument("--chart", type=Path, default=ROOT / "bench" / "chaos.png")
    parser.add_argument("--json", action="store_true", help="the figures as JSON on stdout")
    parser.add_argument("--json-file", type=Path, help="the figures as JSON in a file")
    parser.add_argument("--work-dir", type=Path,
                        help="the HERON_HOME to use (default a temporary one, removed after a "
                             "clean run)")
    parser.add_argument("--keep", action="store_true", help="keep the HERON_HOME and logs")
    args = parser.parse_args(argv)
    args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = set(args.kinds) - set(KINDS)
    if unknown or not args.kinds:
        parser.error(f"unknown kinds {sorted(unknown)}; known: {', '.join(KINDS)}")
    if args.minutes <= 0 or args.rate <= 0:
        parser.error("--minutes and --rate must be > 0")

    if args.work_dir:
        home = args.work_dir.resolve()
        home.mkdir(parents=True, exist_ok=True)
    else:
        home = Path(tempfile.mkdtemp(prefix="bench-chaos-"))
    console = Console(stderr=args.json, width=None if sys.stdout.isatty() else 140)

    def terminated(signum, frame):  # SIGTERM stops the run as Ctrl-C does: cleanup, figures
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminated)
    status = Status()
    soak = Soak(args, home, status)
    drained = False
    error = None
    try:
        with Live(status, console=console, refresh_per_second=4, transient=True):
            soak.submit()
            if not soak.wait_running():
                raise RuntimeError(f"the topology did not get going (logs in {soak.working_dir})")
            soak.chaos()
            soak.settle()
            drained = soak.drain()
    except KeyboardInterrupt:
        error = "interrupted"
    except RuntimeError as exc:
        error = str(exc)
    finally:
        status.line("stopping the topology")
        if soak.resubmitting is not None:  # never submit after the cleanup
            soak.resubmitting.join(timeout=180)
        left = cleanup(home)
    if error is not None and not soak.kills:
        console.print(f"error: {error}", style="bold red")
        console.print(f"kept {home}")
        return 1
    if error is not None:
        soak.notes.append(error)
    if left:
        soak.notes.append(f"processes left after the kill (killed): {', '.join(left)}")
    figures = soak.figures(drained, args.chart)
    if soak.throughput.per_second:
        draw(args.chart, soak.start, soak.throughput.per_second, args.rate, soak.kills,
             soak.monkey_end, soak.resubmits,
             f"chaos soak: {args.minutes:g} min, kill -9 every {args.interval[0]:g}-"
             f"{args.interval[1]:g} s ({len(soak.kills)} kills), {args.rate:g} ids/s offered, "
             f"lost {figures['ids']['lost']}")
    if args.json_file:
        args.json_file.write_text(json.dumps(figures, indent=2))
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_summary(console, figures)
    if args.keep or not figures["ok"]:
        console.print(f"kept {home} (logs in {soak.working_dir}/logs)")
    elif not args.work_dir:
        shutil.rmtree(home, ignore_errors=True)
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
