"""The checkpoint benchmark's runs (bench/checkpoint.py describes the benchmark): the word
count in each reliability mode for a fixed window, the checkpoint-size scenario, and
the ``kill -9`` of a counting bolt instance, each returning its figures.

Every run is real heron processes through :class:`engine.common.local_run.HeronLocalRun` on the
project ``bench/projects/wordcount_bench``, stopped with ``HeronLocalRun.stop``; then
every process whose command line names the run's working directory must be gone (any
left is killed by its pid and reported as an error).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

from bench.chaos_monkey import leftovers
from bench.wordcount_figures import BOLT, PROJECT
from engine.common.launch import Submission
from engine.common.local_run import HeronLocalRun
from engine.common.process.spawn import read_pid_file
from engine.common.serialization.serializers import serializer_for_config
from engine.common.submission import load_topology

log = logging.getLogger("bench.checkpoint")

#: what the spout is told to emit: never reached in a run of minutes
ENDLESS = 10**12
SAMPLE_EVERY = 1000
TOPOLOGIES = {"at-most-once": "wordcount_bench_heron",
              "at-least-once": "wordcount_bench_reliable",
              "effectively-once": "wordcount_bench_stateful"}
SIZE_TOPOLOGY = "wordcount_bench_checkpoint"
#: the state-size runs' vocabulary: their state is the pre-filled keys and these words
VOCABULARY = 100
TM = "heron-tmanager"

Status = Callable[[str], None]


class BenchError(RuntimeError):
    """A run could not produce its figures (the message says why and where the logs are)."""


def _int(values: Mapping[str, Any], name: str, default: int = 0) -> int:
    try:
        return int(float(values.get(name, default)))
    except (TypeError, ValueError):
        return default


def _float(values: Mapping[str, Any], name: str) -> float | None:
    try:
        return float(values[name])
    except (KeyError, TypeError, ValueError):
        return None


# -- one topology run ----------------------------------------------------------------------

class Run:
    """One heron run of a bench topology: start, poll the Topology Master, stop, and make
    sure nothing outlives it."""

    def __init__(self, topology: str, options: Mapping[str, Any], workers: int,
                 work_dir: Path) -> None:
        self.options = {"bench.words": ENDLESS, "bench.seed": 7,
                        "bench.sample_every": SAMPLE_EVERY, **options}
        self.work_dir = work_dir
        self.loaded = load_topology(PROJECT, name=topology, cli_options=dict(self.options),
                                    workers=workers)
        submission = Submission(project=str(PROJECT), name=self.loaded.compiled.plan.name,
                                options=dict(self.options), workers=workers)
        self.runner = HeronLocalRun(self.loaded, submission, working_dir=work_dir)
        self.began = 0.0

    def __enter__(self) -> Run:
        self.began = time.monotonic()
        self.runner.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        left = self.stop()
        if left and exc[0] is None:
            raise BenchError(f"processes outlived the run and were killed: {left}")

    def stop(self) -> list[int]:
        """Stop the topology; kill (by pid) and return whatever of it is still alive."""
        try:
            self.runner.stop(drain=0.0)
        except Exception:  # the check below still runs
            log.exception("stopping the run failed")
        return stop_leftovers(self.work_dir)

    def poll(self) -> dict[str, dict[str, str]]:
        """The Topology Master's metrics now; an error if the run failed."""
        self.runner.poll_metrics()
        failure = self.runner.failure()
        if failure:
            raise BenchError(f"the topology failed: {failure}; logs in {self.log_dir}")
        return self.runner.instances

    @property
    def log_dir(self) -> Path:
        return self.work_dir / "logs"

    def tm(self) -> dict[str, str]:
        return self.runner.instances.get(TM, {})

    def bolt_instances(self) -> dict[str, dict[str, str]]:
        return {i: v for i, v in self.runner.instances.items() if v.get("component") == BOLT}

    def executed(self) -> int:
        """Words the counting tasks executed, as last published (once a second)."""
        return sum(_int(v, "__execute-count") for v in self.bolt_instances().values())

    def processes(self) -> dict[str, psutil.Process]:
        """The run's live processes by pid-file name (every engine process writes one)."""
        out = {}
        for path in sorted((self.work_dir / "pids").glob("*.pid")):
            proc = read_pid_file(path)
            if proc is not None:
                out[path.stem] = proc
        return out

    def wait(self, what: str, predicate: Callable[[], Any], timeout: float, status: Status,
             interval: float = 0.25) -> Any:
        """Poll until ``predicate()`` is truthy; an error after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            value = predicate()
            if value:
                return value
            if time.monotonic() >= deadline:
                raise BenchError(f"{what}: not within {timeout:.0f}s; logs in {self.log_dir}")
            status(f"{what} ({time.monotonic() - self.began:.0f}s)")
            time.sleep(interval)


def stop_leftovers(work_dir: Path, timeout: float = 10.0) -> list[int]:
    """Pids of live processes naming ``work_dir`` in their command line ``timeout``
    seconds after the stop (each is killed); the engine's processes all name it."""
    needle = str(work_dir.resolve())
    deadline = time.monotonic() + timeout
    left = leftovers(needle)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = leftovers(needle)
    for proc in left:
        try:
            proc.kill()
        except psutil.Error:
            pass
    return [p.pid for p in left]


def cpu_seconds(procs: Mapping[str, psutil.Process]) -> float:
    """User + system CPU seconds of these processes so far (children not included: every
    engine process has its own pid file)."""
    total = 0.0
    for proc in procs.values():
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


# -- 1. the word count in each mode -----------------------------------------------------------

@dataclass
class ModeFigures:
    mode: str
    reliability: str
    #: checkpoint interval (effectively-once only)
    interval_s: float | None
    words_per_s: float
    cpu_s_per_million: float
    window_s: float
    words: int
    cpu_s: float
    processes: int
    #: checkpoints the Topology Master completed / abandoned within the window
    checkpoints: int | None = None
    abandoned: int | None = None
    #: the last checkpoint's duration (ms) and bytes as the window ended
    checkpoint_ms: int | None = None
    checkpoint_bytes: int | None = None
    #: the machine's 1-minute load average as the window ended (2 cores: above 2, other
    #: work competed with the run)
    load_avg: float = 0.0
    #: with several rounds (``aggregate``): how many, and each round's words/s and CPU
    rounds: int = 1
    round_words_per_s: list[float] = field(default_factory=list)
    round_cpu_s_per_million: list[float] = field(default_factory=list)


def aggregate(rounds: list[ModeFigures]) -> ModeFigures:
    """One mode's rounds as one figure: the medians of words/s and CPU per word (each
    round's kept beside them), the sums of words, CPU, window and checkpoints."""
    first = rounds[0]
    out = ModeFigures(
        mode=first.mode, reliability=first.reliability, interval_s=first.interval_s,
        words_per_s=statistics.median(r.words_per_s for r in rounds),
        cpu_s_per_million=statistics.median(r.cpu_s_per_million for r in rounds),
        window_s=sum(r.window_s for r in rounds), words=sum(r.words for r in rounds),
        cpu_s=sum(r.cpu_s for r in rounds), processes=first.processes,
        load_avg=statistics.median(r.load_avg for r in rounds), rounds=len(rounds),
        round_words_per_s=[r.words_per_s for r in rounds],
        round_cpu_s_per_million=[r.cpu_s_per_million for r in rounds])
    if first.interval_s is not None:
        out.checkpoints = sum(r.checkpoints or 0 for r in rounds)
        out.abandoned = sum(r.abandoned or 0 for r in rounds)
        out.checkpoint_ms, out.checkpoint_bytes = rounds[-1].checkpoint_ms, \
            rounds[-1].checkpoint_bytes
    return out


def mode_name(reliability: str, interval: float | None) -> str:
    return reliability if interval is None else f"{reliability}, every {interval:g} s"


def run_mode(reliability: str, interval: float | None, *, duration: float, warmup: float,
             workers: int, max_pending: int, work_dir: Path, status: Status) -> ModeFigures:
    """Words/s and CPU per word over a window of ``duration`` seconds that starts
    ``warmup`` seconds after the counting tasks' first words.

    Words are the counting tasks' ``__execute-count`` from the Topology Master (published
    once a second: each end of the window is up to a second old, the same on average at
    both ends); CPU is psutil's user + system time of every process of the run, read at
    the window's ends."""
    name = mode_name(reliability, interval)
    options: dict[str, Any] = {}
    if reliability == "at-least-once":
        options["topology.max.spout.pending"] = max_pending
    if interval is not None:
        options["topology.stateful.checkpoint.interval.seconds"] = interval
    with Run(TOPOLOGIES[reliability], options, workers, work_dir) as run:
        run.wait(f"{name}: starting", lambda: run.executed() > 0, 90, status)
        first = time.monotonic()
        while time.monotonic() - first < warmup:
            run.poll()
            status(f"{name}: warming up {time.monotonic() - first:4.1f}/{warmup:g}s")
            time.sleep(0.25)
        procs = run.processes()
        run.poll()
        t0, words0, cpu0 = time.monotonic(), run.executed(), cpu_seconds(procs)
        done0, abandoned0 = _int(run.tm(), "__checkpoints-completed"), \
            _int(run.tm(), "__checkpoints-abandoned")
        while True:
            time.sleep(0.25)
            run.poll()
            now = time.monotonic()
            words = run.executed() - words0
            status(f"{name}: {now - t0:4.1f}/{duration:g}s  {words / max(now - t0, 1e-9):,.0f} "
                   f"words/s")
            if now - t0 >= duration:
                break
        t1, words1, cpu1 = now, run.executed(), cpu_seconds(procs)
        gone = [n for n, p in procs.items() if not p.is_running()]
        if gone:
            raise BenchError(f"{name}: processes died during the window: {gone}; logs in "
                             f"{run.log_dir}")
        tm = run.tm()
    words = words1 - words0
    if words <= 0:
        raise BenchError(f"{name}: no words counted in the window; logs in {run.log_dir}")
    figures = ModeFigures(mode=name, reliability=reliability, interval_s=interval,
                          words_per_s=words / (t1 - t0),
                          cpu_s_per_million=(cpu1 - cpu0) / words * 1e6,
                          window_s=t1 - t0, words=words, cpu_s=cpu1 - cpu0,
                          processes=len(procs), load_avg=os.getloadavg()[0])
    if interval is not None:
        figures.checkpoints = _int(tm, "__checkpoints-completed") - done0
        figures.abandoned = _int(tm, "__checkpoints-abandoned") - abandoned0
        figures.checkpoint_ms = _int(tm, "__checkpoint-last-duration-ms")
        figures.checkpoint_bytes = _int(tm, "__checkpoint-last-bytes")
    return figures


# -- 2. checkpoint size ---------------------------------------------------------------------

@dataclass
class SizeFigures:
    keys: int
    #: the Topology Master's: start to globally consistent, and all tasks' bytes
    checkpoint_ms: float
    checkpoint_bytes: int
    #: the pre-filled task's own save (flush, pre_save, encode, write + fsync) and bytes
    task_save_ms: float
    task_bytes: int
    task_rss_mb: float
    #: every completed checkpoint's duration (ms) seen, oldest first
    all_checkpoint_ms: list[float] = field(default_factory=list)
    abandoned: int = 0
    #: the same storage path timed in the bench's process (see ``time_storage_path``)
    direct: dict[str, float] = field(default_factory=dict)


def run_size(keys: int, *, checkpoints: int, interval: float, rate: float, workers: int,
             work_dir: Path, status: Status) -> SizeFigures:
    """One counting task pre-filled with ``keys`` keys, the spout at ``rate`` words/s from a
    vocabulary of ``VOCABULARY`` words (so the state is the pre-filled keys and at most
    that many counted words, whatever the rate), checkpoints every ``interval`` s; figures once
    ``checkpoints`` have completed after
    the pre-fill (every checkpoint comes after it: the task fills its state in
    ``initialize``, before it answers the start's restore)."""
    options = {"bench.prefill_keys": keys, "bench.rate": rate, "bench.vocabulary": VOCABULARY,
               "topology.stateful.checkpoint.interval.seconds": interval}
    label = f"{keys:,} keys"
    durations: list[float] = []
    with Run(SIZE_TOPOLOGY, options, workers, work_dir) as run:
        seen = ""

        def another() -> bool:
            nonlocal seen
            tm = run.tm()
            last = tm.get("__checkpoint-last-id", "")
            if last and last != seen:
                seen = last
                durations.append(float(tm.get("__checkpoint-last-duration-ms", "nan")))
            return len(durations) >= checkpoints

        run.wait(f"checkpoint of {label}: {len(durations)}/{checkpoints} done", another,
                 120 + keys / 25_000, status)
        tm = dict(run.tm())
        # the task publishes its metrics once a second: wait for its figures of that save
        run.wait(f"checkpoint of {label}: the task's figures",
                 lambda: _int(next(iter(run.bolt_instances().values()), {}),
                              "__checkpoint-saves") >= checkpoints, 10, status)
        task = next(iter(run.bolt_instances().values()))
        serializer = serializer_for_config(dict(run.loaded.plan.config))
    figures = SizeFigures(keys=keys, checkpoint_ms=durations[-1],
                          checkpoint_bytes=_int(tm, "__checkpoint-last-bytes"),
                          task_save_ms=float(task.get("__checkpoint-save-ms", "nan")),
                          task_bytes=_int(task, "__checkpoint-bytes"),
                          task_rss_mb=_int(task, "__rss-bytes") / 2**20,
                          all_checkpoint_ms=durations,
                          abandoned=_int(tm, "__checkpoints-abandoned"))
    status(f"checkpoint of {label}: timing the storage path in this process")
    figures.direct = time_storage_path(keys, serializer, work_dir / "direct")
    return figures


def time_storage_path(keys: int, serializer: Any, root: Path) -> dict[str, float]:
    """The instance's save and restore path on a state of ``keys`` pre-filled keys, step by
    step, in this process (ms): ``encode_state``; its two parts, gathering the keys and
    values through the ``State`` mapping and the serializer's ``dumps``; the local file
    system storage's ``store`` (write + fsync + rename) and ``load``; ``decode_state``.
    Not a substitute for the engine's figures (no other work competes here): it says
    where a checkpoint's time goes. Each step's CPU time (``*_cpu_ms``) is kept too: on
    a busy machine it is the steadier figure (``store`` waits on the disk, not the CPU)."""
    import shutil

    from wordbench.stateful import prefill_key

    from compat.storm_api.state import HashMapState
    from engine.statefulstorage import LocalFileSystemStorage
    from engine.statefulstorage.codec import decode_state, encode_state

    state = HashMapState({prefill_key(i): i % 1000 for i in range(keys)})
    out: dict[str, float] = {}

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        began, cpu = time.perf_counter(), time.process_time()
        value = fn()
        out[name] = (time.perf_counter() - began) * 1000
        out[name.replace("_ms", "_cpu_ms")] = (time.process_time() - cpu) * 1000
        return value

    listed = timed("gather_ms", lambda: [list(state.keys()), [state[k] for k in state.keys()]])
    timed("dumps_ms", lambda: serializer.dumps(listed))
    listed.clear()  # the lists are large: free them before the next steps
    data = timed("encode_ms", lambda: encode_state(state, serializer, component=BOLT, task=1))
    storage = LocalFileSystemStorage(root)
    out["bytes"] = timed("store_ms", lambda: storage.store("ckpt-1", BOLT, 1, data))
    loaded = timed("load_ms", lambda: storage.load("ckpt-1", BOLT, 1))
    restored = timed("decode_ms", lambda: decode_state(loaded, serializer))
    if len(restored) != keys:
        raise BenchError(f"the storage path gave back {len(restored)} of {keys} keys")
    shutil.rmtree(root, ignore_errors=True)
    return out


# -- 3. kill -9 of a counting bolt instance -----------------------------------------------

@dataclass
class KillFigures:
    interval_s: float
    killed: str
    killed_pid: int
    words_per_s_before: float
    #: kill -> the Topology Master's ``__restores`` seen higher (polled every 0.1 s)
    restore_seen_s: float
    #: kill -> the restarted task's first word after its restore (its own clock)
    first_word_s: float
    #: kill -> the Topology Master's metrics show the restarted task counting
    metrics_counting_s: float
    #: the Topology Master's ``__restore-last-ms`` (restore sent to every task restored)
    restore_last_ms: int
    #: the restarted task's own ``__restore-ms``
    task_restore_ms: float | None
    restore_reason: str
    restored_checkpoint: str
    restored_keys: int
    restored_words: int
    checkpoints_before: int


def _marks(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line]


def run_kill(*, interval: float, settle: float, workers: int, work_dir: Path,
             status: Status) -> KillFigures:
    """The effectively-once word count; once ``settle`` seconds of words are counted and
    two checkpoints completed, ``kill -9`` of one counting bolt instance (the first by
    pid-file name), then the times until the topology rolled back and that task counts
    again with its state restored."""
    mark_dir = work_dir / "marks"
    mark_dir.mkdir(parents=True, exist_ok=True)
    options = {"topology.stateful.checkpoint.interval.seconds": interval,
               "bench.mark_dir": str(mark_dir)}
    with Run(TOPOLOGIES["effectively-once"], options, workers, work_dir) as run:
        run.wait("kill -9: starting", lambda: run.executed() > 0, 90, status)
        first = time.monotonic()
        run.wait("kill -9: counting before the kill",
                 lambda: time.monotonic() - first >= settle
                 and _int(run.tm(), "__checkpoints-completed") >= 2, settle + 60, status)
        samples = []
        for _ in range(2):
            run.poll()
            samples.append((time.monotonic(), run.executed()))
            time.sleep(1.0)
        run.poll()
        samples.append((time.monotonic(), run.executed()))
        rate_before = (samples[-1][1] - samples[0][1]) / (samples[-1][0] - samples[0][0])
        pid_files = sorted((run.work_dir / "pids").glob(f"container_*_{BOLT}_*.pid"))
        victim = next((p for p in pid_files if read_pid_file(p) is not None), None)
        if victim is None:
            raise BenchError(f"no live {BOLT} instance to kill; logs in {run.log_dir}")
        proc = read_pid_file(victim)
        task_id = int(victim.stem.rsplit("_", 1)[1])
        instance = victim.stem
        executed_before = _int(run.runner.instances.get(instance, {}), "__execute-count")
        restores_before = _int(run.tm(), "__restores")
        checkpoints_before = _int(run.tm(), "__checkpoints-completed")
        killed_at = time.time()
        os.kill(proc.pid, signal.SIGKILL)
        restore_seen = first_word = counting = None
        mark: dict[str, Any] = {}
        deadline = time.monotonic() + 90
        while restore_seen is None or first_word is None or counting is None:
            if time.monotonic() > deadline:
                raise BenchError(f"kill -9: the killed task did not count again within 90 s "
                                 f"(restore seen: {restore_seen}, first word: {first_word}); "
                                 f"logs in {run.log_dir}")
            run.poll()
            now = time.time()
            if restore_seen is None and _int(run.tm(), "__restores") > restores_before:
                restore_seen = now - killed_at
            if first_word is None:
                for line in _marks(mark_dir / f"{task_id}.jsonl"):
                    if line["pid"] != proc.pid and line["first_word_at"] > killed_at:
                        mark = line
                        first_word = line["first_word_at"] - killed_at
                        break
            # the Topology Master adds the new process's count to what the killed one had
            # counted (a total across restarts): the task counts again once the total
            # grows past everything reported before the new process's first word
            executed = _int(run.runner.instances.get(instance, {}), "__execute-count")
            if first_word is None:
                executed_before = max(executed_before, executed)
            elif counting is None and restore_seen is not None and executed > executed_before:
                counting = now - killed_at
            status(f"kill -9 of {instance}: {now - killed_at:4.1f}s")
            time.sleep(0.1)
        run.wait("kill -9: the restarted task's figures",
                 lambda: _float(run.runner.instances.get(instance, {}), "__restore-ms"), 5,
                 status)
        tm = run.tm()
        task_restore_ms = _float(run.runner.instances.get(instance, {}), "__restore-ms")
    return KillFigures(interval_s=interval, killed=instance, killed_pid=proc.pid,
                       words_per_s_before=rate_before, restore_seen_s=restore_seen,
                       first_word_s=first_word, metrics_counting_s=counting,
                       restore_last_ms=_int(tm, "__restore-last-ms"),
                       task_restore_ms=task_restore_ms,
                       restore_reason=tm.get("__restore-last-reason", ""),
                       restored_checkpoint=tm.get("__restore-last-checkpoint", ""),
                       restored_keys=int(mark.get("restored_keys", 0)),
                       restored_words=int(mark.get("restored_words", 0)),
                       checkpoints_before=checkpoints_before)


def as_json(figures: Any) -> Any:
    """A figures dataclass (or a list of them) as plain JSON values."""
    if isinstance(figures, list):
        return [as_json(f) for f in figures]
    return asdict(figures)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
