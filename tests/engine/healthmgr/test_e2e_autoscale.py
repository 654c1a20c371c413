"""The Health Manager on a submitted topology (real processes, `heron submit local`):
a bolt that cannot keep up at parallelism 1 is scaled up until backpressure stops, and
scaled back down when the offered rate drops; every id is acked and the sink's
de-duplicated counts are exact; `heron health` shows what happened. A Health Manager
killed after an action is restarted by its executor and keeps the wait after it.

Settings (the project's Topology.config): interval 2 s, window 10 s, wait 15 s, small
watermarks; the bolt sleeps 5 ms per tuple (about 200/s per instance) and the spout
offers the rate the test writes to a file.
"""

from __future__ import annotations

import collections
import os
import signal
import time

import pytest

from engine.common.process import read_pid_file
from engine.statemgr import open_state_manager
from tests.e2e.heron.helpers import wait_until
from tests.engine.cli.conftest import heron, heron_home, live_processes, real_engine, sweep  # noqa: F401
from tests.engine.healthmgr.e2e import (
    INTERVAL_SECS,
    NAME,
    WAIT_SECS,
    WINDOW_SECS,
    actions,
    health,
    kill_and_wait,
    ledger,
    parallelism,
    planned,
    sink_counts,
    submit,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]


#: the scaling test's heron.healthmgr.max.parallelism. The bolt executes about 200/s per
#: instance (170-210 measured), so 600/s needs 3-4. At 6 (the project's maximum) the
#: peak utilisation sits at the over-provisioning limit (600 / (6 x 200) = 0.5), and a
#: constant load may be trimmed to 5 (CI saw it): correct, but not what this test is
#: about. At 5 it is 0.57 or more, clear of the limit, and 5 x 170 still clears 600/s.
SCALING_MAX = 5


def test_scales_up_under_backpressure_and_down_when_the_load_drops(
        real_engine, sweep, live_processes, isolated_imports, tmp_path):  # noqa: F811 (a fixture imported above)
    out, rate_file = submit(tmp_path, 600,
                            options={"heron.healthmgr.max.parallelism": SCALING_MAX})
    with open_state_manager("local", root=real_engine / "state") as state:
        try:
            assert wait_until(lambda: parallelism(state, "slow") > 1, timeout=60), \
                f"never scaled up: {health()}"
            records = health()
            kinds = {(r["type"], r.get("kind")) for r in records}
            assert {("symptom", "back_pressure"), ("diagnosis", "under_provisioning"),
                    ("action", "scale")} <= kinds, records
            (first, *_) = actions(records, "under_provisioning")
            assert first["status"] == "applied" and first["current"] == 1
            assert first["target"] > 1
            stored = state.get("packingplans", NAME)
            assert sum(1 for c in stored.container_plans for i in c.instance_plans
                       if i.component_name == "slow") > 1

            # scaled up (in one step or, if the first fell short, more) until backpressure
            # stopped: the last action reached both plans (an action's record is written
            # once its update was accepted, so the physical plan alone can catch one half
            # done), and the policy had a whole window after it (the window restarts when
            # the update's pause ends) and two more runs in which it did nothing
            def settled() -> bool:
                records = health()
                last = actions(records)[-1]
                resumed = [r["time"] for r in records if r["type"] == "note"
                           and r["message"].startswith("resumed") and r["time"] >= last["time"]]
                quiet_from = max(last["time"] + WAIT_SECS,
                                 max(resumed, default=last["time"]) + WINDOW_SECS)
                return (time.time() > quiet_from + 2 * INTERVAL_SECS + 3.0
                        and planned(state, "slow") == parallelism(state, "slow")
                        == last["target"]
                        and actions(health())[-1] == last)
            assert wait_until(settled, timeout=150), health()[-10:]
            before = actions(health())
            peak = before[-1]["target"]
            assert 1 < peak <= SCALING_MAX
            # a trim under the constant load is allowed (a window that spans an update's
            # pause sees a lower peak rate: issue 42), but the load drop must bring one
            rate_file.write_text("60")

            def scaled_down() -> list[dict]:
                return [a for a in actions(health())[len(before):]
                        if a["diagnosis"] == "over_provisioning"]
            assert wait_until(scaled_down, timeout=75), \
                f"never scaled down from {peak}: {health()[-10:]}"
            down = scaled_down()[0]
            assert down["status"] == "applied" and down["target"] < down["current"], down
            assert wait_until(lambda: planned(state, "slow") == parallelism(state, "slow")
                              <= down["target"], timeout=30), \
                f"the scale-down never reached the plan: {actions(health())}"
            assert all(a["target"] <= SCALING_MAX for a in actions(health()))
            # every action waited for the previous one's wait
            times = [a["time"] for a in actions(health())]
            assert all(b - a >= WAIT_SECS - 0.5 for a, b in zip(times, times[1:])), times

            table = heron("health", NAME)
            assert table.exit_code == 0 and "under_provisioning" in table.output

            rate_file.write_text("0")
            assert wait_until(lambda: ledger(out)[0] and ledger(out)[0] <= ledger(out)[1],
                              timeout=90), \
                f"ids never acked: {sorted(ledger(out)[0] - ledger(out)[1])[:20]}"
        finally:
            killed = kill_and_wait(NAME, live_processes)
    assert killed.exit_code == 0, killed.output
    emitted, _ = ledger(out)
    assert sink_counts(out) == collections.Counter(f"w{n % 7}" for n in emitted)
    assert wait_until(lambda: not live_processes(), timeout=15)


def test_a_restarted_health_manager_keeps_the_wait_after_its_last_action(
        real_engine, sweep, live_processes, isolated_imports, tmp_path):  # noqa: F811 (a fixture imported above)
    submit(tmp_path, 600)
    pid_file = real_engine / "topologies" / NAME / "pids" / "heron-healthmgr.pid"
    log = real_engine / "topologies" / NAME / "logs" / "heron-healthmgr.log"
    with open_state_manager("local", root=real_engine / "state"):
        try:
            assert wait_until(lambda: actions(health()), timeout=60), "no action"
            first = actions(health())[0]
            before = read_pid_file(pid_file)
            assert before is not None
            os.kill(before.pid, signal.SIGKILL)
            after = wait_until(lambda: (p := read_pid_file(pid_file)) is not None
                               and p.pid != before.pid and p, timeout=30)
            assert after, "the executor did not restart the Health Manager"
            assert wait_until(lambda: "resuming after its last action" in log.read_text(),
                              timeout=20), log.read_text()[-2000:]
            # watch past the end of the wait: no action of any status came before it
            deadline = first["time"] + WAIT_SECS + 4.0
            wait_until(lambda: time.time() > deadline, timeout=WAIT_SECS + 10)
            later = [a for a in actions(health()) if a["time"] > first["time"]]
            assert all(a["time"] >= first["time"] + WAIT_SECS - 0.5 for a in later), later
        finally:
            killed = kill_and_wait(NAME, live_processes)
    assert killed.exit_code == 0, killed.output
    assert wait_until(lambda: not live_processes(), timeout=15)
