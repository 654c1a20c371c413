"""The Health Manager on submitted topologies (real processes, `heron submit local`), in
the scenarios issue 21 asks for beyond scaling up and down (test_e2e_autoscale.py):

- a policy deactivated at run time after a scale-up takes no action while backpressure
  persists, for three intervals plus the wait (and acts again once activated);
- a fields-grouped bolt with a hot key: data skew naming the hot instance, no scaling;
- an instance that turns slow until restarted: exactly one restart of its container, and
  its process has a new pid; at-least-once, every id is acked and the counts are exact.

Topologies of tests/e2e/heron/projects/autoscale (e2e_autoscale, e2e_hotkey,
e2e_restart) with the issue's test settings: interval 2 s, window 10 s, wait 15 s.
"""

from __future__ import annotations

import time

import pytest

from engine.common.process import read_pid_file
from engine.statemgr import open_state_manager
from tests.e2e.heron.helpers import wait_until
from tests.engine.cli.conftest import heron, heron_home, live_processes, real_engine, sweep  # noqa: F401
from tests.engine.healthmgr.e2e import (
    INSTANCE_ID,
    INTERVAL_SECS,
    NAME,
    NOISE_MS_PER_S,
    WAIT_SECS,
    WINDOW_SECS,
    BackPressureMeter,
    actions,
    all_acked,
    expected_counts,
    health,
    instances_by_task,
    kill_and_wait,
    ledger,
    of_type,
    parallelism,
    sink_counts,
    sleep_until,
    submit,
    working_dir,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

POLICY = "dynamic-resource-allocation"
#: the project's heron.healthmgr.max.parallelism
MAX_PARALLELISM = 6


def notes(records: list[dict], text: str) -> list[dict]:
    return [r for r in records if r["type"] == "note" and text in r["message"]]


def test_a_policy_deactivated_after_a_scale_up_takes_no_action_while_backpressure_persists(
        real_engine, sweep, live_processes, isolated_imports, tmp_path):  # noqa: F811 (a fixture imported above)
    # 20 ms per tuple: 50/s per instance. The first scale-up goes from 1 to at most 5
    # (Heron's formula caps the unused capacity at 4), 250/s for the 600/s offered: the
    # backpressure persists, and an activated policy would scale again after the wait.
    submit(tmp_path, 600, options={"e2e.delay": 0.02})
    with open_state_manager("local", root=real_engine / "state") as state, \
            BackPressureMeter(real_engine, "slow") as meter:
        try:
            assert wait_until(lambda: actions(health()), timeout=60), \
                f"never scaled up: {health()}"
            (first,) = actions(health())
            assert (first["kind"], first["diagnosis"], first["status"]) == \
                ("scale", "under_provisioning", "applied"), first
            assert first["current"] == 1 < first["target"] < MAX_PARALLELISM, first

            toggled = heron("update", NAME, "--runtime-config", f"{POLICY}:mode=deactivated")
            assert toggled.exit_code == 0, toggled.output
            deactivated_at = time.time()
            assert deactivated_at < first["time"] + WAIT_SECS, \
                "the toggle came after the wait: the test proves nothing"
            assert wait_until(lambda: parallelism(state, "slow") == first["target"],
                              timeout=30), "the scale-up never reached the physical plan"

            # three intervals plus the wait, measuring the backpressure all along
            deadline = deactivated_at + 3 * INTERVAL_SECS + WAIT_SECS
            while time.time() < deadline:
                meter.poll()
                time.sleep(1.0)
            meter.poll()
            records = health()
            assert actions(records) == [first], actions(records)
            assert parallelism(state, "slow") == first["target"]
            assert notes(records, f"policy {POLICY} deactivated at run time"), records[-10:]
            assert meter.ms_per_s() > NOISE_MS_PER_S * 10, \
                f"the backpressure did not persist: {meter.ms_per_s():.0f} ms/s"

            # activated again, it acts at its next run: the backpressure is still there
            toggled = heron("update", NAME, "--runtime-config", f"{POLICY}:mode=activated")
            assert toggled.exit_code == 0, toggled.output
            assert wait_until(lambda: len(actions(health())) > 1,
                              timeout=4 * INTERVAL_SECS + 5), health()[-10:]
            records = health()
            second = actions(records)[1]
            assert (second["kind"], second["diagnosis"], second["current"]) == \
                ("scale", "under_provisioning", first["target"]), second
            assert notes(records, f"policy {POLICY} activated at run time")
            assert any(r["time"] == second["time"] for r in of_type(records, "symptom",
                                                                      "back_pressure"))
        finally:
            killed = kill_and_wait(NAME, live_processes)
    assert killed.exit_code == 0, killed.output
    assert wait_until(lambda: not live_processes(), timeout=15)


HOTKEY = "e2e_hotkey"


def test_a_hot_key_is_reported_as_data_skew_on_its_instance_and_not_scaled(
        real_engine, sweep, live_processes, isolated_imports, tmp_path):  # noqa: F811 (a fixture imported above)
    out, _ = submit(tmp_path, 600, name=HOTKEY)
    with open_state_manager("local", root=real_engine / "state") as state:
        try:
            assert wait_until(lambda: list(out.glob("hot-*")), timeout=30), \
                "no instance got the hot key"
            (marker,) = out.glob("hot-*")
            hot = instances_by_task(state, HOTKEY)[int(marker.name.split("-")[1])]
            assert parallelism(state, "slow", HOTKEY) == 3

            assert wait_until(lambda: of_type(health(HOTKEY), "diagnosis", "data_skew"),
                              timeout=60), f"no data skew: {health(HOTKEY)[-10:]}"
            first = of_type(health(HOTKEY), "diagnosis", "data_skew")[0]
            # a whole window more of policy runs: each reports the skew, none scales
            sleep_until(first["time"] + WINDOW_SECS + 1.0)
            records = health(HOTKEY)
            skews = of_type(records, "diagnosis", "data_skew")
            assert len(skews) >= WINDOW_SECS / INTERVAL_SECS - 1, skews
            assert all((d["component"], d["instances"]) == ("slow", [hot]) for d in skews), \
                (hot, skews)
            for kind in ("wait_queue_skew", "processing_rate_skew"):
                assert any(s["component"] == "slow" and s["instances"] == [hot]
                           for s in of_type(records, "symptom", kind)), (kind, records[-10:])
            assert notes(records, f"data_skew in slow ({hot})")
            assert not actions(records), actions(records)
            assert parallelism(state, "slow", HOTKEY) == 3
        finally:
            killed = kill_and_wait(HOTKEY, live_processes)
    assert killed.exit_code == 0, killed.output
    assert wait_until(lambda: not live_processes(), timeout=15)


RESTART = "e2e_restart"


@pytest.mark.timeout(240)
def test_an_instance_slow_until_restarted_gets_one_container_restart_and_a_new_pid(
        real_engine, sweep, live_processes, isolated_imports, tmp_path):  # noqa: F811 (a fixture imported above)
    out, rate_file = submit(tmp_path, 600, name=RESTART)
    pids = working_dir(real_engine, RESTART) / "pids"
    with open_state_manager("local", root=real_engine / "state") as state:
        try:
            assert wait_until(lambda: list(out.glob("flaky-*")), timeout=30), \
                "no instance started flaky"
            (marker,) = out.glob("flaky-*")
            by_task = instances_by_task(state, RESTART)
            flaky = by_task[int(marker.name.split("-")[1])]
            container = int(flaky.split("_")[1])
            spouts = [i for i in by_task.values()
                      if INSTANCE_ID.fullmatch(i).group(1) == "source"]
            assert all(int(s.split("_")[1]) != container for s in spouts), \
                f"the spout shares container {container} with {flaky}: a restart loses " \
                "its ledger"
            before = read_pid_file(pids / f"{flaky}.pid")
            assert before is not None and before.pid == int(marker.read_text())

            assert wait_until(lambda: actions(health(RESTART)), timeout=60), \
                f"no restart: {health(RESTART)[-10:]}"
            (restart,) = actions(health(RESTART))
            assert (restart["kind"], restart["diagnosis"], restart["status"],
                    restart["component"], restart["container"]) == \
                ("restart_container", "slow_instance", "applied", "slow", container), restart
            slow = [d for d in of_type(health(RESTART), "diagnosis", "slow_instance")
                    if d["time"] == restart["time"]]
            assert slow and slow[0]["instances"] == [flaky], slow

            after = wait_until(lambda: (p := read_pid_file(pids / f"{flaky}.pid")) is not None
                               and p.pid != before.pid and p, timeout=30)
            assert after, f"{flaky} still runs as pid {before.pid}"
            assert not before.is_running()

            # the restarted instance is fast: no other action once the wait is over and
            # the policy has run twice more
            sleep_until(restart["time"] + WAIT_SECS + 2 * INTERVAL_SECS + 1.0)
            assert actions(health(RESTART)) == [restart], actions(health(RESTART))
            assert (p := read_pid_file(pids / f"{flaky}.pid")) and p.pid == after.pid

            rate_file.write_text("0")
            assert wait_until(lambda: all_acked(out), timeout=60), \
                f"ids never acked: {sorted(ledger(out)[0] - ledger(out)[1])[:20]}"
        finally:
            killed = kill_and_wait(RESTART, live_processes)
    assert killed.exit_code == 0, killed.output
    emitted, _ = ledger(out)
    assert sink_counts(out) == expected_counts(emitted)
    assert wait_until(lambda: not live_processes(), timeout=15)
