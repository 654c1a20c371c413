"""What the Health Manager's end-to-end tests share (test_e2e_*.py): submitting a topology
of the ``autoscale`` project with ``heron submit local``, reading its ledgers, its
physical plan, its metrics and ``heron health --json``.

The project's topologies (tests/e2e/heron/projects/autoscale/topologies) use the issue's
test settings: interval 2 s, window 10 s, wait 15 s after an action. The tests use the
fixtures of tests/engine/cli/conftest.py (``real_engine`` for a temporary HERON_HOME,
``sweep`` and ``live_processes`` so that no process outlives a test, even a failed one).
"""

from __future__ import annotations

import collections
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.heron.helpers import complete_text, json_lines, wait_until
from tests.engine.cli.conftest import heron

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "autoscale"
#: the topology the scaling tests submit (topologies/e2e_autoscale.py)
NAME = "e2e_autoscale"
#: the projects' health.policy.interval.ms, window.ms and post.action.wait.ms, in seconds
INTERVAL_SECS = 2.0
WINDOW_SECS = 10.0
WAIT_SECS = 15.0
#: Heron's BackPressureDetector.noiseFilterMillis: less backpressure is not backpressure
NOISE_MS_PER_S = 20.0
BACK_PRESSURE_PREFIX = "__time_spent_back_pressure_by_compid/"
#: an instance id: container_<container>_<component>_<task>
INSTANCE_ID = re.compile(r"container_\d+_(.+)_\d+")


def ledger(out: Path) -> tuple[set[int], set[int]]:
    """(ids emitted, ids acked) from the spout's own ledger."""
    emitted, acked = set(), set()
    for path in out.glob("spout-*.jsonl"):
        for event in json_lines(path):
            (emitted if event["event"] == "emit" else acked if event["event"] == "ack"
             else set()).add(event["id"])
    return emitted, acked


def all_acked(out: Path) -> bool:
    emitted, acked = ledger(out)
    return bool(emitted) and emitted <= acked


def sink_counts(out: Path) -> collections.Counter:
    """Per-word counts of the ids the sink received, each id once."""
    seen: dict[int, str] = {}
    for path in out.glob("sink-*.txt"):
        for line in complete_text(path).splitlines():
            n, _, word = line.partition(" ")
            if word:
                seen[int(n)] = word
    return collections.Counter(seen.values())


def expected_counts(ids: set[int]) -> collections.Counter:
    """What the sink must count for ``ids``: SlowWords sends ``w<id % 7>``."""
    return collections.Counter(f"w{n % 7}" for n in ids)


def parallelism(state: Any, component: str, name: str = NAME) -> int:
    pplan = state.get("pplans", name)
    return sum(1 for i in pplan.instances if i.info.component_name == component) if pplan else 0


def planned(state: Any, component: str, name: str = NAME) -> int:
    """The component's parallelism in the packing plan: what an update is moving to."""
    packing = state.get("packingplans", name)
    return sum(1 for c in packing.container_plans for i in c.instance_plans
               if i.component_name == component) if packing else 0


def instances_by_task(state: Any, name: str = NAME) -> dict[int, str]:
    """task id -> instance id (``container_<c>_<component>_<task>``) in the physical plan."""
    pplan = state.get("pplans", name)
    return {i.info.task_id: i.instance_id for i in pplan.instances} if pplan else {}


def health(name: str = NAME) -> list[dict]:
    """``heron health NAME --json``: every record, oldest first."""
    result = heron("health", name, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def actions(records: list[dict], diagnosis: str | None = None,
            kind: str | None = None) -> list[dict]:
    return [r for r in records if r["type"] == "action"
            and (diagnosis is None or r["diagnosis"] == diagnosis)
            and (kind is None or r["kind"] == kind)]


def of_type(records: list[dict], type_: str, kind: str | None = None) -> list[dict]:
    return [r for r in records if r["type"] == type_ and (kind is None or r.get("kind") == kind)]


def submit(tmp_path: Path, rate: int, name: str = NAME,
           options: dict[str, object] | None = None) -> tuple[Path, Path]:
    """``heron submit local`` the project's topology ``name`` (its file names it), the
    spout offering ``rate`` tuples/s (the test rewrites the rate file to change it)."""
    out, rate_file = tmp_path / "out", tmp_path / "rate"
    out.mkdir()
    rate_file.write_text(str(rate))
    extra = [arg for key, value in (options or {}).items() for arg in ("-o", f"{key}={value}")]
    submitted = heron("submit", "local", str(PROJECT), "-n", name, "-o", f"e2e.out={out}",
                      "-o", f"e2e.rate_file={rate_file}", *extra)
    assert submitted.exit_code == 0, submitted.output
    return out, rate_file


def kill_and_wait(name: str, live_processes: Callable[[], list], timeout: float = 15.0) -> Any:
    """``heron kill NAME``, then wait (at most ``timeout`` s) until no process of the
    test's HERON_HOME is alive; the kill's result. For a test's ``finally``: ``heron
    kill`` returns once it has stopped the scheduler and signalled the rest, not once
    every process has exited, and the ``sweep`` fixture looks right after the test. A
    test that failed never reached its own wait after the kill, so processes still
    exiting were reported as "processes left running" on top of the real failure. A
    process that outlives the wait is still the sweep's to report (and kill)."""
    try:
        return heron("kill", name)
    finally:
        wait_until(lambda: not live_processes(), timeout=timeout)


def working_dir(home: Path, name: str = NAME) -> Path:
    return home / "topologies" / name


def sleep_until(deadline: float) -> None:
    """Sleep until the wall clock (the Health Manager's clock) passes ``deadline``."""
    while time.time() < deadline:
        time.sleep(min(0.5, max(deadline - time.time(), 0.01)))


class BackPressureMeter:
    """Backpressure that ``component``'s instances caused, from the Topology Master's
    metrics, read from outside the Health Manager as the tracker asks the Topology Master,
    and counted as the Health Manager counts it: what a Stream Manager blamed on the
    instance (``__time_spent_back_pressure_by_compid/<instance>``: cumulative ms) plus
    the instance's share of what it blamed nobody for (engine/healthmgr/blame.py: under
    byte credits the time watermark's pauses are most of the backpressure there is).
    :meth:`poll` once a second or so; :meth:`ms_per_s` is the mean since the first poll.
    A Stream Manager that restarted starts its counters again from 0, which counts as
    what it reports."""

    def __init__(self, home: Path, component: str, name: str = NAME) -> None:
        from engine.common.launch import StateManagerSpec
        from engine.tools.tracker.service import Tracker, TrackerSettings

        self.name = name
        self.component = component
        self.tracker = Tracker(StateManagerSpec(kind="local", root=str(home / "state")),
                               TrackerSettings(poll_interval=0, tm_timeout=2.0, home=home))
        self.tracker.start(poll=False)
        self.last: dict[str, dict[str, float]] | None = None
        self.first_time: float | None = None
        self.last_time: float | None = None
        self.total_ms = 0.0

    def __enter__(self) -> BackPressureMeter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.tracker.stop()

    def _ours(self, instance: str) -> bool:
        match = INSTANCE_ID.fullmatch(instance)
        return bool(match and match.group(1) == self.component)

    def poll(self) -> bool:
        """Read the counters once; False when the Topology Master did not answer."""
        from engine.healthmgr.blame import unblamed_shares
        from engine.healthmgr.metrics import counter_increase

        try:
            snapshot = self.tracker.snapshot(self.tracker.record(self.name, lazy=True))
        except Exception:
            return False
        now = time.time()
        current = {process: {metric: float(value) for metric, value in values.items()}
                   for process, values in snapshot.values.items()}
        if self.last is None:
            self.first_time = now
        else:
            elapsed = now - (self.last_time or now)
            for process, after in current.items():
                before = self.last.get(process, {})
                for metric, value in after.items():
                    if metric.startswith(BACK_PRESSURE_PREFIX) \
                            and self._ours(metric[len(BACK_PRESSURE_PREFIX):]):
                        self.total_ms += counter_increase(before.get(metric, 0.0), value)
                if before:
                    shares = unblamed_shares(before, after, elapsed)
                    self.total_ms += sum(ms for instance, ms in shares.items()
                                         if self._ours(instance))
        self.last, self.last_time = current, now
        return True

    def ms_per_s(self) -> float:
        if self.first_time is None or self.last_time is None \
                or self.last_time <= self.first_time:
            return 0.0
        return self.total_ms / (self.last_time - self.first_time)
