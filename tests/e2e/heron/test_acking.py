"""At-least-once on the heron engine, seen from the spout: fails and timeouts reach the
spout's ``fail``, replays arrive, every id is acked exactly once in the end, and
``topology.max.spout.pending`` bounds what is in flight.

The suite runs on the compiled tuple path (``HERON_REQUIRE_COMPILED=1``); the replay test
also runs on the pure-Python one (``HERON_PURE_PYTHON=1`` in every process), which stays
the fallback and the reference."""

from __future__ import annotations

import collections
import time
from pathlib import Path

import psutil
import pytest

from tests.e2e.heron.helpers import PROJECTS, HeronRun, json_lines, leaf_tuples

pytestmark = pytest.mark.timeout(180)

ACKING = PROJECTS / "acking"
#: the first log line of a process on the pure-Python tuple path (engine.common.codec)
PURE_LINE = "heron.fastpath: tuple path: pure Python (HERON_PURE_PYTHON=1)"


def tuple_path(path: str, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Set up the tuple path ``path`` ("compiled" or "pure-python") for the processes a
    test starts; True for pure Python."""
    pure = path == "pure-python"
    if pure:
        monkeypatch.setenv("HERON_PURE_PYTHON", "1")
    monkeypatch.delenv("HERON_PURE_PYTHON_KINDS", raising=False)
    return pure


def assert_pure_python(log_dir: Path) -> None:
    """Every process of the run said, first, that it runs the pure-Python tuple path, and
    so did every restart of it (a restart appends to the same log)."""
    logs = sorted(Path(log_dir).glob("*.log"))
    assert any(p.name.startswith("stmgr-") for p in logs), [p.name for p in logs]
    for path in logs:
        lines = path.read_text().splitlines()
        assert PURE_LINE in lines[0], (path.name, lines[0])
        said = [line for line in lines if "heron.fastpath: tuple path:" in line]
        assert all(PURE_LINE in line for line in said), (path.name, said)


def ledger(directory: Path) -> dict[int, list[dict]]:
    """Spout task -> its events, in order."""
    out = {}
    for path in sorted(directory.glob("*.jsonl")):
        out[int(path.stem)] = json_lines(path)
    return out


@pytest.mark.parametrize("path", ["compiled", "pure-python"])
def test_fails_and_timeouts_are_replayed_until_every_id_is_acked_once(
        path, tmp_path, isolated_imports, monkeypatch):
    pure = tuple_path(path, monkeypatch)
    limit = 120
    out = tmp_path / "ledger"
    run = HeronRun(ACKING, "e2e_replay", tmp_path / "run",
                   options={"e2e.limit": limit, "e2e.out": str(out)})
    try:
        run.start()
        result = run.finish(time_limit=120)
    finally:
        run.close()
    assert result.reason == "finished", (result.error, result.log_dir)
    events = ledger(out)
    assert len(events) == 2  # both spout tasks wrote their ledger
    for task, task_events in events.items():
        acks = collections.Counter(e["id"] for e in task_events if e["event"] == "ack")
        fails = collections.Counter(e["id"] for e in task_events if e["event"] == "fail")
        emits = collections.Counter(e["id"] for e in task_events if e["event"] == "emit")
        # every id acked exactly once
        assert acks == collections.Counter(range(limit)), task
        # failed by the bolt (…3) or timed out (…7): failed at least once, then replayed
        for n in range(limit):
            if n % 10 in (3, 7):
                assert fails[n] >= 1, (task, n, task_events)
                assert emits[n] == fails[n] + 1, (task, n)
                first_fail = next(i for i, e in enumerate(task_events)
                                  if e["id"] == n and e["event"] == "fail")
                ack = next(i for i, e in enumerate(task_events)
                           if e["id"] == n and e["event"] == "ack")
                assert first_fail < ack
            else:
                assert fails[n] == 0, (task, n)
                assert emits[n] == 1, (task, n)
    # downstream saw each id of each spout task exactly once (failures emitted nothing)
    sink = collections.Counter(row[0] for row in leaf_tuples(result, "sink"))
    assert sink == collections.Counter({n: 2 for n in range(limit)})
    spout = result.components["source"]
    assert spout.acked == 2 * limit
    assert spout.failed == 2 * sum(1 for n in range(limit) if n % 10 in (3, 7))
    assert run.alive() == []
    if pure:
        assert_pure_python(result.log_dir)


def test_max_spout_pending_bounds_the_trees_in_flight(tmp_path, isolated_imports):
    limit, max_pending = 300, 8
    out = tmp_path / "ledger"
    run = HeronRun(ACKING, "e2e_pending", tmp_path / "run",
                   options={"e2e.limit": limit, "e2e.out": str(out), "e2e.per_call": 5,
                            "e2e.delay": 0.002})
    try:
        run.start()
        result = run.finish(time_limit=120)
    finally:
        run.close()
    assert result.reason == "finished", (result.error, result.log_dir)
    (events,) = ledger(out).values()
    in_flight = [e["in_flight"] for e in events if e["event"] == "emit"]
    assert len(in_flight) == limit
    # next_tuple emits up to 5 at a time; it is only called with fewer than 8 pending
    assert max(in_flight) <= max_pending - 1 + 5
    assert max(in_flight) >= max_pending  # the bound was reached, so it was what held
    acks = collections.Counter(e["id"] for e in events if e["event"] == "ack")
    assert acks == collections.Counter(range(limit))


def test_a_slow_bolt_pauses_every_spout_and_nothing_grows_without_bound(tmp_path,
                                                                       isolated_imports):
    high = 1024 * 1024          # the topology's high watermark (1 MB)
    batch_bytes = 1024 * 160    # one full batch of [n, 100-char padding] rows, generously
    run = HeronRun(ACKING, "e2e_backpressure", tmp_path / "run", keep_all=False,
                   options={"e2e.seconds": 30, "e2e.delay": 0.0005})
    samples: list[dict] = []
    emitted: list[int] = []
    peak_rss: dict[str, int] = {}
    def resumed() -> bool:
        """The spouts emitted again after the first pause was seen."""
        paused = [i for i, s in enumerate(samples)
                  if any(s[sid].get("__backpressure") == "1" for sid in s)]
        return bool(paused) and emitted[-1] > emitted[paused[0]]

    try:
        run.start()
        # at least 10 s; on a loaded machine the first pause can come late, with much in
        # flight behind it, so keep watching (bounded by the spout's 30 s) until the
        # spouts are seen going again
        began = time.monotonic()
        while True:
            metrics = run.metrics()
            samples.append({sid: dict(metrics.get(sid, {})) for sid in ("stmgr-1", "stmgr-2")})
            emitted.append(run.emitted("firehose"))
            for name, proc in run.record_processes().items():
                try:
                    peak_rss[name] = max(peak_rss.get(name, 0), proc.memory_info().rss)
                except psutil.Error:
                    pass
            elapsed = time.monotonic() - began
            if elapsed >= 27 or (elapsed >= 10 and resumed()):
                break
            time.sleep(0.5)
        result = run.finish(time_limit=0.1)
    finally:
        run.close()
    assert result.error is None, (result.error, result.log_dir)
    last = samples[-1]
    for sid in ("stmgr-1", "stmgr-2"):
        # the most ever waiting for one destination: the watermark plus the batch in hand
        assert 0 < int(last[sid]["__largest-queue-bytes-max"]) <= high + batch_bytes, last[sid]
        # every spout was paused at some point (its own manager's or its peer's doing)
        assert int(last[sid]["__time-spouts-paused-ms"]) > 0, last[sid]
    # somebody caused it, and the spouts were let go again (the spout kept emitting)
    assert any(int(last[s]["__time-spent-back-pressure-initiated-ms"]) > 0 for s in last)
    # ...and the spouts were let go again: they emitted more after the first pause
    first_pause = next(i for i, s in enumerate(samples)
                       if any(s[sid].get("__backpressure") == "1" for sid in s))
    assert emitted[-1] > emitted[first_pause], (first_pause, emitted, samples[-1],
                                                result.components["slow"])
    # the spouts emitted far less than they could: they followed the bolt
    bolt = result.components["slow"].executed
    assert result.components["firehose"].emitted < bolt + 2 * 400 * 1024
    assert peak_rss and max(peak_rss.values()) < 300 * 1024 * 1024, peak_rss
    assert run.alive() == []
