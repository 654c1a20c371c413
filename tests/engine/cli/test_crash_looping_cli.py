"""A submitted topology whose spout fails in ``open`` every time: it is retried forever
(never given up) and every view says it is crash-looping, with its last error: `heron
metrics`, `heron list` and the tracker's ``/topologies/restarts``."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from engine.common.launch import StateManagerSpec
from engine.tools.tracker.app import create_app
from engine.tools.tracker.service import TrackerSettings
from tests.e2e.heron.helpers import PROJECTS, wait_until
from tests.engine.cli.conftest import heron
from tests.engine.tracker.conftest import TOKEN

pytestmark = pytest.mark.timeout(120)

NAME = "e2e_never_opens"
ERROR = "ConnectionError: e2e: never_opens cannot reach its source"


def test_a_crash_looping_spout_is_shown_by_metrics_list_and_the_tracker(real_engine, sweep,
                                                                        live_processes,
                                                                        isolated_imports):
    submitted = heron("submit", "local", str(PROJECTS / "faulty"), "-n", NAME,
                      "-o", "heron.executor.restart.backoff.initial.ms=50",
                      "-o", "heron.executor.restart.backoff.max.ms=200")
    assert submitted.exit_code == 0, submitted.output
    try:
        def metrics_output() -> str:
            result = heron("metrics", NAME)
            return result.output if "crash-looping container_" in result.output else ""
        shown = wait_until(metrics_output, timeout=60)
        assert "crash-looping container_1_never_opens_" in shown and ERROR in shown, \
            heron("metrics", NAME).output

        listing = heron("list")
        assert listing.exit_code == 0
        assert "crash-looping:" in listing.output  # the status column (wrapped in the table)
        assert f"{NAME}: crash-looping container_1_never_opens_" in listing.output
        assert ERROR in listing.output

        spec = StateManagerSpec(kind="local", root=str(real_engine / "state"))
        with TestClient(create_app(spec, TrackerSettings(poll_interval=60, tm_timeout=5),
                                   ui=False, token=TOKEN),
                        headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            answer = client.get("/topologies/restarts", params={"topology": NAME})
            assert answer.status_code == 200, answer.text
            body = answer.json()
        [looping] = body["crash_looping"]
        assert looping["component"] == "never_opens" and looping["last_error"] == ERROR
        assert looping["restarts"] >= 3
        assert {i["component"] for i in body["instances"]} == {"never_opens", "discard"}
    finally:
        killed = heron("kill", NAME)
    assert killed.exit_code == 0, killed.output
    assert wait_until(lambda: not live_processes(), timeout=15)
