"""Effectively-once on the heron engine (issue 29), with real processes: a stateful word
count (a replayable spout keeping its position in state, a fields-grouped counting bolt
keeping counts in state, over two containers) ends with counts **equal** to the input's,
word for word, after a bolt raises mid-run, and after each kind of engine process is
killed with ``kill -9`` mid-run; ``topology.stateful.start.clean`` and a corrupt newest
checkpoint are handled.

Counts are read from what the counting bolt emitted, ``(word, count)`` after each update:
under effectively-once every count it ever emits is at most the true total (a rollback
replays the same input onto the restored counts), so the largest count seen for each
word must be its total exactly; a count counted twice shows as a larger one.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from tests.e2e.heron.helpers import PROJECTS, HeronRun, describe_run, kill_one, wait_until

PROJECT = PROJECTS / "stateful"
sys.path.insert(0, str(PROJECT / "src"))
from e2e_stateful_parts import expected_counts, write_corpus  # noqa: E402

pytestmark = pytest.mark.timeout(240)

SPOUT_TASKS = 2  # each spout task emits the whole corpus


def largest_counts(result) -> dict[str, int]:
    cap = result.capture.streams[("count", "default")]
    best: Counter = Counter()
    for word, count in cap.tuples:
        best[word] = max(best[word], count)
    return dict(best)


def expected(n: int) -> dict[str, int]:
    return {word: SPOUT_TASKS * count for word, count in expected_counts(n).items()}


def tm_figures(run: HeronRun) -> dict[str, str]:
    return run.metrics().get("heron-tmanager", {})


def completed(run: HeronRun) -> int:
    return int(tm_figures(run).get("__checkpoints-completed", "0"))


def test_counts_are_exact_when_a_bolt_raises_mid_run(tmp_path, isolated_imports):
    n = 8_000  # about 24,000 words per counting task: it raises a third of the way
    run = HeronRun(PROJECT, "stateful_wordcount", tmp_path / "run", workers=2,
                   options={"e2e.sentences": n, "e2e.raise_after": 8_000,
                            "e2e.raise_flag": str(tmp_path / "raised"),
                            "topology.stateful.checkpoint.interval.seconds": 0.5})
    try:
        run.start()
        result = run.finish(time_limit=120)
    finally:
        run.close()
    assert result.reason == "finished", describe_run(result)
    assert (tmp_path / "raised").exists(), "the injected failure never happened"
    assert largest_counts(result) == expected(n)
    figures = run.runner.instances["heron-tmanager"]
    assert int(figures["__restores"]) == 2  # the start, and the rollback
    assert figures["__restore-last-reason"].startswith("task ")
    assert "injected failure" in figures["__restore-last-reason"]
    assert int(figures["__checkpoints-completed"]) >= 1
    # the run's summary (heron run prints it, --json has it) says the same
    stats = result.checkpoints
    assert stats is not None and stats.completed >= 1 and stats.rollbacks == 1
    assert "injected failure" in stats.restores[-1].reason
    assert set(stats.last_bytes_per_task) == {i for i in run.runner.instances
                                              if i.startswith("container_")}


#: pid-file name prefix of each process kind, and how many of it are killed
KILLS = [("spout instance", "container_1_sentences"), ("bolt instance", "container_2_count"),
         ("stream manager", "stmgr-1"), ("topology master", "heron-tmanager"),
         ("metrics manager", "metricsmgr-2"), ("executor", "executor-2")]


def _checkpoint_after(run: HeronRun, before: int) -> bool:
    return wait_until(lambda: completed(run) > before, 60) is not None


def _monkey(run: HeronRun, kills: list, killed: list, problems: list, fast_flag: Path) -> None:
    """Kill each (kind, pid-file prefix) in turn with SIGKILL, a checkpoint apart, while
    the spouts emit slowly; once a checkpoint completed after the last kill (the topology
    recovered while words still flowed), let the spouts run fast to the end."""
    try:
        for kind, prefix in kills:
            if not _checkpoint_after(run, completed(run)):
                problems.append(f"no checkpoint completed before killing the {kind}")
                return
            pid = wait_until(lambda: kill_one(run.working_dir / "pids", prefix), 30)
            if pid is None:
                problems.append(f"no live {kind} to kill")
                return
            killed.append((kind, pid))
        if not _checkpoint_after(run, completed(run)):
            problems.append("no checkpoint completed after the last kill")
    finally:
        fast_flag.touch()


#: sentences per spout task in the kill tests: at the slow pace (5 sentences, about 15
#: words, every 40 ms per task) they would last over 90 s, several times what the kills
#: take even on a loaded machine
KILL_SENTENCES = 12_000


def paced(tmp_path: Path, **options) -> dict:
    """The kill tests' options: the spouts emit a steady, slow stream while the kills
    happen and run fast to the end once the monkey is done; a checkpoint every 0.5 s."""
    return {"e2e.pause_ms": 40, "e2e.fast_flag": str(tmp_path / "fast"),
            "topology.stateful.checkpoint.interval.seconds": 0.5, **options}


def run_under_kills(run: HeronRun, kills: list, time_limit: float = 180):
    """Start ``run`` (its options from ``paced``), kill each process kind of ``kills`` in
    turn while it runs (a checkpoint apart), and return its result once it finished;
    every kill must have happened and the run must have ended by itself."""
    killed: list[tuple[str, int]] = []
    problems: list[str] = []
    fast_flag = Path(run.options["e2e.fast_flag"])
    try:
        run.start()
        thread = threading.Thread(target=_monkey,
                                  args=(run, kills, killed, problems, fast_flag), daemon=True)
        thread.start()
        result = run.finish(time_limit=time_limit)
        thread.join(5)
    finally:
        fast_flag.touch()
        run.close()
    assert not problems, problems
    assert [k for k, _ in killed] == [k for k, _ in kills]
    assert result.reason == "finished", describe_run(result)
    return result


def test_counts_are_exact_when_each_kind_of_process_is_killed_mid_run(tmp_path,
                                                                       isolated_imports):
    n = KILL_SENTENCES
    run = HeronRun(PROJECT, "stateful_wordcount", tmp_path / "run", workers=2,
                   options=paced(tmp_path, **{"e2e.sentences": n}))
    result = run_under_kills(run, KILLS)
    assert largest_counts(result) == expected(n)
    assert int(run.runner.instances["heron-tmanager"]["__restores"]) >= 2


SINK_KILLS = [("spout instance", "container_?_sentences"), ("bolt instance", "container_?_count"),
              ("file sink", "container_?_files"), ("redis sink", "container_?_redis"),
              ("stream manager", "stmgr-2"), ("topology master", "heron-tmanager"),
              ("executor", "executor-1")]


def test_file_and_redis_sinks_write_every_record_exactly_once_under_kills(
        tmp_path, isolated_imports, redis_url):
    """The shipped file spout, file sink and Redis sink under kills: every (word, count)
    the counting bolt's consistent history holds is in the committed files once and in
    the Redis list once, and nothing else is (records of transactions a rollback aborted
    never show, replays never double); the file spout's restored positions neither skip
    nor repeat a line."""
    import json

    import redis

    from compat.connectors import read_committed

    n = KILL_SENTENCES
    out = tmp_path / "out"
    write_corpus(tmp_path / "in", n, files=SPOUT_TASKS)  # one file per spout task
    run = HeronRun(PROJECT, "stateful_sinks", tmp_path / "run", workers=2,
                   options=paced(tmp_path, **{
                       "heron.connectors.file.path": str(tmp_path / "in" / "*.txt"),
                       "heron.connectors.file.sink.dir": str(out),
                       "heron.connectors.redis.url": redis_url,
                       "heron.connectors.redis.sink.key": "counts"}))
    run_under_kills(run, SINK_KILLS)
    wanted = Counter((word, count) for word, total in expected(n).items()
                     for count in range(1, total + 1))
    files = Counter(tuple(json.loads(line)) for line in read_committed(out))
    assert files == wanted
    client = redis.Redis.from_url(redis_url)
    try:
        listed = Counter(tuple(json.loads(item)) for item in client.lrange("counts", 0, -1))
    finally:
        client.close()
    assert listed == wanted


def test_a_redis_stream_to_a_redis_hash_is_exact_after_a_bolt_raises(tmp_path,
                                                                    isolated_imports,
                                                                    redis_url):
    """The shipped Redis stream spout (its position: the last entry id, in state) and the
    Redis sink (hash kind): after a counting task raises mid-run and the topology rolls
    back, the hash holds each word's exact count."""
    import redis
    from e2e_stateful_parts import sentence

    n = 8_000
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        pipe = client.pipeline()
        for i in range(n):
            pipe.xadd("sentences", {"sentence": sentence(i)})
        pipe.xadd("sentences", {"end": "1"})
        pipe.execute()
        run = HeronRun(PROJECT, "stream_counts", tmp_path / "run", workers=2,
                       options={"heron.connectors.redis.url": redis_url,
                                "heron.connectors.redis.stream.key": "sentences",
                                "heron.connectors.redis.sink.key": "counts",
                                "e2e.raise_after": 6_000,
                                "e2e.raise_flag": str(tmp_path / "raised")})
        try:
            run.start()
            result = run.finish(time_limit=120)
        finally:
            run.close()
        assert result.reason == "finished", describe_run(result)
        assert (tmp_path / "raised").exists(), "the injected failure never happened"
        assert result.checkpoints.rollbacks == 1
        counts = {word: int(count) for word, count in client.hgetall("counts").items()}
    finally:
        client.close()
    assert counts == expected_counts(n)


def _run_once(tmp_path: Path, name: str, state_spec, **options) -> tuple[dict, object, HeronRun]:
    """One finite run with checkpoints under ``tmp_path/ckpts``: (the Topology Master's
    figures once it restored, the result, the run)."""
    run = HeronRun(PROJECT, "stateful_wordcount", tmp_path / name, workers=2,
                   options={"heron.statefulstorage.localfs.root.path": str(tmp_path / "ckpts"),
                            **options}, state_spec=state_spec)
    try:
        run.start()
        assert wait_until(lambda: int(tm_figures(run).get("__restores", "0")) >= 1, 60)
        figures = tm_figures(run)
        result = run.finish(time_limit=120)
    finally:
        run.close()
    return figures, result, run


def test_a_corrupt_newest_checkpoint_is_skipped_and_start_clean_starts_empty(
        tmp_path, isolated_imports):
    """A first run leaves consistent checkpoints in the storage (``heron kill`` deletes
    their list with the topology, so the test keeps a copy); with the list put back and
    its newest checkpoint corrupted, the next run restores the one before it; with
    ``topology.stateful.start.clean`` it starts from empty state."""
    from engine.common.launch import StateManagerSpec
    from engine.statefulstorage import LocalFileSystemStorage

    n = 2_000
    state_spec = StateManagerSpec(kind="local", root=str(tmp_path / "state"))
    kept: list = []

    # the first run's spouts are slow until it has 3 checkpoints, then fast to the end;
    # it deletes none of its checkpoints' files (those the copy lists must stay)
    fast = tmp_path / "fast"
    first = HeronRun(PROJECT, "stateful_wordcount", tmp_path / "first", workers=2,
                     options={"e2e.sentences": n, "e2e.pause_ms": 40, "e2e.fast_flag": str(fast),
                              "topology.stateful.checkpoint.interval.seconds": 0.5,
                              "heron.statefulstorage.localfs.max.checkpoints": 1000,
                              "heron.statefulstorage.localfs.root.path": str(tmp_path / "ckpts")},
                     state_spec=state_spec)
    try:
        first.start()
        assert wait_until(lambda: completed(first) >= 3, 60), "no checkpoints"
        kept.append(first.state.get("statefulcheckpoints", "stateful_wordcount"))
        fast.touch()
        result = first.finish(time_limit=120)
    finally:
        fast.touch()
        first.close()
    assert result.reason == "finished", describe_run(result)
    ids = [c.checkpoint_id for c in kept[0].consistent_checkpoints]
    assert len(ids) >= 2
    storage = LocalFileSystemStorage(tmp_path / "ckpts" / "stateful_wordcount")
    assert all(list((storage.root / i).rglob("*.state")) for i in ids[:2]), \
        sorted(p.name for p in storage.root.iterdir())
    for path in (storage.root / ids[0]).rglob("*.state"):  # one byte of each file flipped
        data = bytearray(path.read_bytes())
        data[-1] ^= 0xFF
        path.write_bytes(bytes(data))

    for name, clean, restored in (("second", False, ids[1]), ("third", True, "empty")):
        with state_spec.open() as state:
            state.create("statefulcheckpoints", "stateful_wordcount", kept[0])
        figures, result, _ = _run_once(tmp_path, name, state_spec, **{
            "e2e.sentences": n, "e2e.pause_ms": 1, "topology.stateful.start.clean": clean})
        assert figures["__restore-last-checkpoint"] == restored, (name, figures)
        assert result.reason == "finished", describe_run(result)
        assert largest_counts(result) == expected(n), name


def test_a_slow_bolt_under_backpressure_abandons_checkpoints_keeps_running_and_recovers(
        tmp_path, isolated_imports):
    """While the counting bolts take 3 ms a word, markers wait behind queued words longer
    than the 2 s checkpoint timeout: checkpoints are abandoned and counted, and words
    still flow. Once the bolts are fast again a checkpoint completes, and the counts are
    exact."""
    n = 6_000
    run = HeronRun(PROJECT, "stateful_wordcount", tmp_path / "run", workers=2,
                   options={"e2e.sentences": n, "e2e.pause_ms": 1, "e2e.slow_ms": 3,
                            "e2e.slow_tuples": 2_500,
                            "topology.stateful.checkpoint.timeout.secs": 2})
    seen: dict[str, int] = {}
    try:
        run.start()
        assert wait_until(lambda: int(tm_figures(run).get("__checkpoints-abandoned", "0")) >= 1,
                          90), f"no checkpoint was abandoned: {tm_figures(run)}"
        figures = tm_figures(run)
        seen["abandoned_at"] = int(figures["__checkpoints-completed"])
        seen["emitted"] = run.emitted("count")
        assert wait_until(lambda: run.emitted("count") > seen["emitted"], 30), \
            "no word was counted while checkpoints were abandoned"
        assert wait_until(lambda: completed(run) > seen["abandoned_at"], 90), \
            f"no checkpoint completed once the pressure eased: {tm_figures(run)}"
        result = run.finish(time_limit=120)
    finally:
        run.close()
    assert result.reason == "finished", describe_run(result)
    assert largest_counts(result) == expected(n)
