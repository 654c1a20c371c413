"""The Kafka benchmark's runs (bench/kafka.py describes the benchmark): the input, the
ceiling (confluent-kafka's own consume-split-count-produce loop in this process), the
topology on the heron engine with its lag and CPU sampled every half second, and the
output check.

Every figure comes from Kafka or the engine, not from the components' own counts: the
window of a topology run starts at the spout's first emit (a stamp file the bench spout
writes) and ends at the create time of the last record in the output topic, i.e. when the
output holds every count; the check reads the output topic back.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from bench.checkpoint_runs import stop_leftovers
from engine.common.launch import Submission
from engine.common.local_run import HeronLocalRun
from engine.common.process.spawn import read_pid_file
from engine.common.submission import load_topology

log = logging.getLogger("bench.kafka")

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "bench" / "projects" / "kafka_bench"
K = "heron.connectors.kafka."
PARTITIONS = 3
#: what the sink (KafkaSink's defaults) and the ceiling's producer both use
PRODUCER = {"acks": "all", "enable.idempotence": True, "linger.ms": 5}
SAMPLE_SECS = 0.5
SPOUT = "spout"
LAG_METRIC = "user/kafkaOffset/totalSpoutLag"

Status = Callable[[str], None]


class BenchError(RuntimeError):
    """A run could not produce its figures (the message says why and where the logs are)."""


# -- the input ---------------------------------------------------------------------------

def vocabulary(size: int, seed: int) -> list[str]:
    """``size`` distinct pronounceable words built from syllables: deterministic, nothing
    downloaded, and of the length of real words (so bytes per record are realistic)."""
    rng = random.Random(seed)
    onsets, vowels, codas = "bcdfghjklmnprstvwz", "aeiou", ["", "", "n", "r", "s", "t", "l"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                          for _ in range(rng.randint(1, 3))))
    return sorted(words)


def sentences(count: int, seed: int, vocab_size: int) -> list[str]:
    """``count`` seeded sentences of 3 to 9 words (6 on average)."""
    words = vocabulary(vocab_size, seed)
    rng = random.Random(seed + 1)
    return [" ".join(rng.choices(words, k=rng.randint(3, 9))) for _ in range(count)]


def expected_counts(lines: list[str]) -> Counter:
    return Counter(word for line in lines for word in line.split())


def load_input(bootstrap: str, topic: str, lines: list[str]) -> float:
    """Write ``lines`` to ``topic``, round-robin over its partitions, and wait until the
    broker holds every one; the seconds it took."""
    from confluent_kafka import Producer

    began = time.monotonic()
    failures: list[Any] = []
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER, "linger.ms": 20})
    for n, line in enumerate(lines):
        value = line.encode()
        while True:
            try:
                producer.produce(topic, value=value, partition=n % PARTITIONS,
                                 on_delivery=lambda err, _m: err and failures.append(err))
                break
            except BufferError:
                producer.poll(0.05)
        if n % 1000 == 0:
            producer.poll(0)
    left = producer.flush(60)
    if left or failures:
        raise BenchError(f"loading {topic}: {left} record(s) undelivered, "
                         f"{len(failures)} failed ({failures[:1]})")
    return time.monotonic() - began


# -- the output --------------------------------------------------------------------------

@dataclass
class OutputCheck:
    records: int
    #: words whose newest count in the output is not their count in the input
    wrong: int
    #: words of the input with no record in the output
    missing: int
    #: keys in the output that are not words of the input
    unknown: int
    #: the create time (s since the epoch) of the newest output record: the output holds
    #: every count from then on
    last_create_time: float | None
    first_create_time: float | None
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.wrong or self.missing or self.unknown)

    def describe(self) -> str:
        if self.ok:
            return f"ok ({self.records:,} records)"
        return (f"{self.wrong} wrong, {self.missing} missing, {self.unknown} unknown"
                + (f" (e.g. {'; '.join(self.examples[:3])})" if self.examples else ""))


def check_output(bootstrap: str, topic: str, expected: Counter, limit: float = 120.0,
                 status: Status | None = None) -> OutputCheck:
    """Read ``topic`` to its end (read_committed, librdkafka's default: a transactional
    sink's committed records only) and compare each word's newest count with
    ``expected``. The end is the high watermark of the fetch responses, as the bounded
    spout reads it (Tansu answers ListOffsets(latest) wrongly)."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "enable.partition.eof": True})
    newest: dict[str, bytes] = {}
    records = 0
    first_ts = last_ts = None
    at_end: set[int] = set()
    deadline = time.monotonic() + limit
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        while len(at_end) < PARTITIONS:
            if time.monotonic() > deadline:
                raise BenchError(f"reading {topic}: not at its end within {limit:.0f}s "
                                 f"({records:,} records read)")
            for msg in consumer.consume(10_000, timeout=0.5):
                error = msg.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        at_end.add(msg.partition())
                    continue
                at_end.discard(msg.partition())
                records += 1
                newest[msg.key().decode()] = msg.value()
                ts = msg.timestamp()[1]
                if ts > 0:
                    ts /= 1000.0
                    first_ts = ts if first_ts is None else min(first_ts, ts)
                    last_ts = ts if last_ts is None else max(last_ts, ts)
            if status is not None:
                status(f"reading the output: {records:,} records")
    finally:
        consumer.close()
    wrong, examples = 0, []
    for word, value in newest.items():
        want = expected.get(word)
        if want is not None and int(value) != want:
            wrong += 1
            if len(examples) < 5:
                examples.append(f"{word}: {int(value)} not {want}")
    missing = sum(1 for word in expected if word not in newest)
    unknown = sum(1 for word in newest if word not in expected)
    return OutputCheck(records, wrong, missing, unknown, last_ts, first_ts, examples)


# -- what a run measured --------------------------------------------------------------------

@dataclass
class LagSample:
    #: seconds from the run's first emit (the ceiling: its first record)
    t: float
    #: the spouts' own ``kafkaOffset/totalSpoutLag`` summed (None until both reported)
    reported: int | None
    #: input records minus the records the spouts emitted (the ceiling: consumed)
    unread: int


@dataclass
class RunFigures:
    mode: str
    records: int
    words: int
    #: first emit (ceiling: first record consumed) to the output holding every count
    window_s: float
    #: first emit to the run's end (every task done, seen by polling every 0.5 s; the
    #: ceiling: its producer flushed)
    to_end_s: float
    wall_s: float
    check: OutputCheck
    lag: list[LagSample]
    #: CPU seconds per process kind within the window (start-up left out)
    cpu_s: dict[str, float]
    load_avg: tuple[float, float]
    note: str = ""

    @property
    def records_per_s(self) -> float:
        return self.records / self.window_s if self.window_s > 0 else 0.0

    @property
    def words_per_s(self) -> float:
        return self.words / self.window_s if self.window_s > 0 else 0.0

    def peak_lag(self) -> int:
        """The highest lag sampled, of the spouts' reported lag and input minus emitted:
        the spouts leave a partition out of their report until they have emitted from it
        or committed it, so early in a run the reported sum can miss a whole partition."""
        return max((max(s.reported or 0, s.unread) for s in self.lag), default=0)

    def drained_s(self) -> float | None:
        """The first sample at which the spouts' reported lag (the ceiling: records not
        consumed) was 0, in seconds from the first record read; None if never seen."""
        for s in self.lag:
            if (s.reported if s.reported is not None else s.unread) == 0:
                return s.t
        return None


# -- the ceiling -----------------------------------------------------------------------------

def ceiling(bootstrap: str, in_topic: str, out_topic: str, records: int, words: int,
            expected: Counter, status: Status, broker_pid: int | None) -> RunFigures:
    """confluent-kafka's own loop in this one process: consume the input (every partition
    from the start), split, count per word, produce (word, count) per word with the sink's
    producer settings, until every record is read and the producer flushed."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    began = time.monotonic()
    load = _load()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"ceiling-{uuid.uuid4().hex}",
                         "enable.auto.commit": False})
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER})
    counts: dict[str, int] = {}
    consumed = 0
    lag: list[LagSample] = []
    cpu = CpuSampler(None, broker_pid, "the loop (this process, librdkafka threads included)")
    first = 0.0
    try:
        consumer.assign([TopicPartition(in_topic, p, 0) for p in range(PARTITIONS)])
        next_sample = 0.0
        deadline = time.monotonic() + 60 + records / 1000
        produce, poll = producer.produce, producer.poll
        while consumed < records:
            batch = consumer.consume(500, timeout=0.2)
            now = time.time()
            if batch and not first:
                first = now
                cpu.baseline()
                next_sample = now
            for msg in batch:
                if msg.error() is not None:
                    continue
                consumed += 1
                for word in msg.value().decode().split():
                    count = counts.get(word, 0) + 1
                    counts[word] = count
                    while True:
                        try:
                            produce(out_topic, key=word, value=str(count))
                            break
                        except BufferError:  # librdkafka's queue is full: serve it
                            poll(0.05)
            poll(0)
            if first and now >= next_sample:
                next_sample = now + SAMPLE_SECS
                lag.append(LagSample(now - first, None, records - consumed))
                status(f"ceiling: {consumed:,} of {records:,} records")
            if time.monotonic() > deadline:
                raise BenchError(f"ceiling: {consumed:,} of {records:,} records read in time")
        left = producer.flush(60)
        end = time.time()
        if left:
            raise BenchError(f"ceiling: {left} record(s) not delivered")
        lag.append(LagSample(end - first, None, 0))
        cpu.sample()
    finally:
        consumer.close()
    wall = time.monotonic() - began
    check = check_output(bootstrap, out_topic, expected, status=status)
    return RunFigures("ceiling (confluent-kafka loop)", records, words, window_s=end - first,
                      to_end_s=end - first, wall_s=wall, check=check, lag=lag,
                      cpu_s=cpu.within_window(),
                      load_avg=load)


# -- a topology run ---------------------------------------------------------------------------

def process_kind(name: str) -> str:
    """A pid file's name ("container_1_split_6", "stmgr-1", ...) as a row of the CPU table."""
    if name.startswith("container_"):
        return "instance: " + name.split("_")[2]
    for prefix, kind in (("stmgr", "Stream Manager"), ("metricsmgr", "Metrics Manager"),
                         ("heron-tmanager", "Topology Master"), ("executor", "executor")):
        if name.startswith(prefix):
            return kind
    return name


@dataclass
class TopologyMode:
    mode: str
    topology: str
    options: dict[str, Any]


def topology_modes(max_pending: int, transactional: bool | None) -> list[TopologyMode]:
    """The runs: at-least-once, and effectively-once with the transactional sink, without
    it, or both (``transactional`` None)."""
    alo = TopologyMode("at-least-once", "kafka_bench", {
        "topology.max.spout.pending": max_pending,
        # Storm's default is 30 s; 1 s lets the committed-offset lag move during the run
        K + "spout.offset.commit.period.ms": 1000})
    eo = [TopologyMode(f"effectively-once, {'transactional' if tx else 'flushing'} sink",
                       "kafka_bench_stateful", {K + "sink.transactional": tx})
          for tx in ((True, False) if transactional is None else (transactional,))]
    return [alo, *eo]


def run_topology(mode: TopologyMode, bootstrap: str, in_topic: str, out_topic: str,
                 records: int, words: int, expected: Counter, workers: int, work_dir: Path,
                 time_limit: float, status: Status, broker_pid: int | None) -> RunFigures:
    """Run the topology on the heron engine until every task is done, sampling the
    spouts' lag and every process's CPU every half second, then check the output."""
    stamps = work_dir / "stamps"
    stamps.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:8]
    options = {K + "bootstrap.servers": bootstrap, K + "spout.topics": in_topic,
               K + "spout.first.poll.offset.strategy": "EARLIEST", K + "spout.finite": True,
               K + "consumer.properties": {"group.id": f"bench-{tag}"},
               K + "sink.topic": out_topic, K + "sink.key.field": "word",
               K + "sink.message.field": "count",
               K + "sink.transactional.id.prefix": f"bench-{tag}",
               "bench.stamp_dir": str(stamps), **mode.options}
    loaded = load_topology(PROJECT, name=mode.topology, cli_options=dict(options),
                           workers=workers)
    submission = Submission(project=str(PROJECT), name=loaded.compiled.plan.name,
                            options=dict(options), workers=workers)
    runner = HeronLocalRun(loaded, submission, working_dir=work_dir / "run")
    began = time.monotonic()
    load = _load()
    lag: list[LagSample] = []
    cpu = CpuSampler(work_dir / "run" / "pids", broker_pid)
    first: float | None = None
    end: float | None = None
    try:
        runner.start()
        deadline = began + time_limit
        while True:
            time.sleep(SAMPLE_SECS)
            runner.poll_metrics()
            now = time.time()
            failure = runner.failure()
            if failure:
                raise BenchError(f"{mode.mode}: the topology failed: {failure}; logs in "
                                 f"{work_dir / 'run' / 'logs'}")
            if first is None:
                first = _first_emit(stamps)
                if first is not None:
                    cpu.baseline()
            cpu.sample()
            spouts = [v for v in runner.instances.values() if v.get("component") == SPOUT]
            emitted = sum(_int(v.get("__emit-count")) for v in spouts)
            if first is not None:
                reported = [v.get(LAG_METRIC) for v in spouts]
                total = (sum(_int(r) for r in reported)
                         if len(reported) == 2 and None not in reported else None)
                lag.append(LagSample(now - first, total, max(0, records - emitted)))
            done = runner.all_done()
            status(f"{mode.mode}: {emitted:,} of {records:,} records emitted"
                   + (f", lag {lag[-1].reported:,}" if lag and lag[-1].reported is not None
                      else "") + f" ({time.monotonic() - began:.0f}s)")
            if done:
                end = now
                break
            if time.monotonic() > deadline:
                raise BenchError(f"{mode.mode}: not done within {time_limit:.0f}s "
                                 f"({emitted:,} of {records:,} records emitted); logs in "
                                 f"{work_dir / 'run' / 'logs'}")
    finally:
        try:
            runner.stop(drain=0.0)
        finally:
            left = stop_leftovers(work_dir / "run")
    if left:
        raise BenchError(f"{mode.mode}: processes outlived the run and were killed: {left}")
    wall = time.monotonic() - began
    if first is None:
        raise BenchError(f"{mode.mode}: no spout stamped its first emit")
    check = check_output(bootstrap, out_topic, expected, status=status)
    note = ""
    if check.last_create_time is not None:
        window = check.last_create_time - first
    else:
        window, note = end - first, "no create times in the output: window to the run's end"
    return RunFigures(mode.mode, records, words, window_s=window, to_end_s=end - first,
                      wall_s=wall, check=check, lag=lag, cpu_s=cpu.within_window(),
                      load_avg=load, note=note)


class CpuSampler:
    """CPU seconds of every process of a run (its pid files), the broker and this process,
    sampled as the run goes (a process's last sample stands once it is gone), so the
    window's share can be told from start-up's."""

    def __init__(self, pids: Path | None, broker_pid: int | None,
                 me: str = "bench process (scheduler, sampler)") -> None:
        self.pids = pids
        self.procs: dict[str, psutil.Process] = {me: psutil.Process()}
        if broker_pid:
            try:
                self.procs["broker (tansu)"] = psutil.Process(broker_pid)
            except psutil.Error:
                pass
        self.last: dict[str, float] = {}
        self.base: dict[str, float] | None = None

    def sample(self) -> None:
        for path in self.pids.glob("*.pid") if self.pids else ():
            if path.stem not in self.procs:
                proc = read_pid_file(path)
                if proc is not None:
                    self.procs[path.stem] = proc
        for name, proc in self.procs.items():
            try:
                times = proc.cpu_times()
            except psutil.Error:
                continue
            self.last[name] = times.user + times.system

    def baseline(self) -> None:
        """The CPU spent before the first emit (start-up): left out of the figures."""
        self.sample()
        self.base = dict(self.last)

    def within_window(self) -> dict[str, float]:
        out: dict[str, float] = {}
        base = self.base or {}
        for name, secs in self.last.items():
            kind = process_kind(name)
            out[kind] = out.get(kind, 0.0) + secs - base.get(name, 0.0)
        return out


def _first_emit(stamps: Path) -> float | None:
    times = []
    for path in stamps.glob("first-emit-*"):
        if path.suffix == ".tmp":
            continue
        try:
            times.append(float(path.read_text()))
        except (OSError, ValueError):
            continue
    return min(times) if times else None


def _int(value: Any) -> int:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return 0


def _load() -> tuple[float, float]:
    one, five, _ = psutil.getloadavg()
    return (one, five)


def as_json(run: RunFigures, ceiling_rate: float | None) -> dict[str, Any]:
    """A run's figures for ``--json``."""
    return {"mode": run.mode, "records": run.records, "words": run.words,
            "records_per_s": run.records_per_s, "words_per_s": run.words_per_s,
            "over_ceiling": run.records_per_s / ceiling_rate if ceiling_rate else None,
            "window_s": run.window_s, "to_run_end_s": run.to_end_s,
            "records_per_s_to_run_end": run.records / run.to_end_s if run.to_end_s else None,
            "wall_s": run.wall_s, "peak_lag": run.peak_lag(), "lag_drained_s": run.drained_s(),
            "load_avg_before": list(run.load_avg), "note": run.note,
            "output": {"ok": run.check.ok, "records": run.check.records,
                       "wrong": run.check.wrong, "missing": run.check.missing,
                       "unknown": run.check.unknown, "examples": run.check.examples},
            "cpu_s_in_window": run.cpu_s,
            "lag": [{"t": round(s.t, 3), "reported": s.reported, "unread": s.unread}
                    for s in run.lag]}


def options_json(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in options.items()}
