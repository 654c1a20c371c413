"""The web page's charts over time and its Health Manager timeline, in headless Chromium.

Every component gets its charts (emit rate, execute rate for bolts, latency, backpressure
time, parallelism) drawn by uPlot from the tracker's recorded snapshots, and each
draws a line through points once the tracker has history; the parallelism chart shows
the physical plan's instances. A topology without a Health Manager says
"Health Manager: off". Screenshots go to ``$HERON_TEST_ARTIFACTS`` when that is set.

scripts/test.sh installs Chromium; without it these tests are skipped with the reason.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.browser import png_size, wait_for
from tests.engine.tracker.conftest import COMPONENTS, NAME, page_link, tracker_app
from tests.engine.tracker.test_ui_browser import artifact, browser  # noqa: F401 (fixture)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TASKS = {"sentence_spout": 1, "split_bolt": 2, "count_bolt": 2}
#: the charts of a spout and of a bolt (spouts do not execute)
SPOUT_CHARTS = ["emit-rate", "latency", "backpressure", "parallelism"]
BOLT_CHARTS = ["emit-rate", "execute-rate", "latency", "backpressure", "parallelism"]

#: each chart's points as drawn (pixels in its plot, from the chart's uPlot), written as
#: an SVG path's ``d`` (M, then L per point) for :func:`path_points`
CHARTS = """JSON.stringify([...document.querySelectorAll('#chart-rows .chart')].map(s => {
    const u = s.uplot, n = Number(s.dataset.points);
    const xy = u.data[0].map((t, i) => [u.valToPos(t, 'x'), u.valToPos(u.data[1][i], 'y')]);
    return {component: s.dataset.component, metric: s.dataset.metric,
            bottom: u.over.clientHeight,
            points: n, d: n ? xy.map(([x, y], i) => (i ? 'L' : 'M') + x.toFixed(1) + ' '
                                                  + y.toFixed(1)).join(' ') : '',
            marks: [...s.querySelectorAll('.health-mark')].map(m => m.dataset.type)};
}))"""


def charts(browser, session) -> list[dict]:  # noqa: F811 (a fixture imported above)
    return json.loads(browser.evaluate(session, CHARTS))


def path_points(d: str) -> list[tuple[float, float]]:
    """The (x, y) vertices of a chart's path: M/L pairs, and H/V steps (parallelism)."""
    out: list[tuple[float, float]] = []
    tokens = (
        d.replace("M", " M ").replace("L", " L ").replace("H", " H ").replace("V", " V ").split()
    )
    x = y = 0.0
    i = 0
    while i < len(tokens):
        op = tokens[i]
        if op in ("M", "L"):
            x, y = float(tokens[i + 1]), float(tokens[i + 2])
            i += 3
        elif op == "H":
            x = float(tokens[i + 1])
            i += 2
        elif op == "V":
            y = float(tokens[i + 1])
            i += 2
        else:
            raise AssertionError(f"unexpected path token {op!r} in {d!r}")
        out.append((x, y))
    return out


def test_every_component_has_charts_that_draw_its_history(local_topology, serve, browser,  # noqa: F811 (a fixture imported above)
                                                          tmp_path, record_property):
    served = serve(tracker_app(local_topology.state_spec))
    session = browser.open_page(page_link(served.url, f"/ui/topologies/{NAME}?window=60"))

    expected = {(c, m) for c in COMPONENTS
                for m in (SPOUT_CHARTS if c == "sentence_spout" else BOLT_CHARTS)}
    wait_for(browser, session, f"document.querySelectorAll('#chart-rows .chart').length "
                               f"=== {len(expected)}")
    found = charts(browser, session)
    assert {(c["component"], c["metric"]) for c in found} == expected

    # the tracker polls every 0.5 s here; the charts redraw every 5 s
    wait_for(browser, session, """[...document.querySelectorAll('#chart-rows .chart')]
        .filter(s => ['emit-rate', 'parallelism'].includes(s.dataset.metric)
                     || (s.dataset.metric === 'execute-rate'))
        .every(s => Number(s.dataset.points) >= 2)""",
             timeout=40)
    found = charts(browser, session)
    for chart in found:
        if chart["metric"] in ("emit-rate", "execute-rate", "parallelism"):
            vertices = path_points(chart["d"])
            assert chart["points"] >= 2 and len(vertices) >= 2, chart
            xs = [x for x, _ in vertices]
            assert xs == sorted(xs), chart  # time runs left to right
    # the spout emits and the bolts execute: their rate lines leave the zero line
    # (a rate of 0 is drawn on the plot's bottom edge)
    for component, metric in (("sentence_spout", "emit-rate"), ("split_bolt", "execute-rate")):
        chart = next(c for c in found if (c["component"], c["metric"]) == (component, metric))
        assert min(y for _, y in path_points(chart["d"])) < chart["bottom"] - 1, chart
    # parallelism is the physical plan's instances (the latest value's tooltip says it)
    tops = json.loads(browser.evaluate(session, """JSON.stringify(Object.fromEntries(
        [...document.querySelectorAll('#chart-rows .chart[data-metric="parallelism"]')].map(
            s => [s.dataset.component, s.querySelector('.latest').title])))"""))
    for component, tasks in TASKS.items():
        assert tops[component].startswith(f"parallelism: latest {tasks} "), tops

    status = browser.evaluate(session, "document.getElementById('health-status').textContent")
    assert status.startswith("Health Manager: off"), status
    rows = browser.evaluate(session, "document.querySelector('#health-records tbody').textContent")
    assert "Health Manager: off" in rows

    shot = browser.screenshot(session, artifact(tmp_path, "tracker-ui-charts.png"))
    record_property("screenshot", str(shot))
    width, height = png_size(shot.read_bytes())
    assert width >= 800 and height >= 600
    assert browser.problems(session) == [], browser.log_tail()


def test_the_health_timeline_lists_records_and_marks_the_charts(local_topology, serve, browser,  # noqa: F811 (a fixture imported above)
                                                                tmp_path):
    """Records are stored into ``healthmgr/NAME`` for this (Health-Manager-less) test
    topology through the store the Health Manager itself uses
    (``engine/healthmgr/store.py``) instead of running a full autoscale: the autoscale
    end-to-end test (tests/engine/healthmgr/test_e2e_autoscale.py) already checks that a
    real Health Manager writes them. This test checks the page shows what is stored."""
    from engine.healthmgr.records import (
        Action,
        ActionKind,
        ActionStatus,
        Diagnosis,
        DiagnosisKind,
        HealthEvent,
        Note,
        Symptom,
        SymptomKind,
    )
    from engine.healthmgr.state import LoopState
    from engine.healthmgr.store import KIND, HealthStore

    now = time.time()
    policy = "dynamic-resource-allocation"
    events = [
        HealthEvent(policy, Symptom(SymptomKind.BACK_PRESSURE, "split_bolt", now - 30,
                                    ("container_1_split_bolt_2",), {"ms_per_s": 640.5})),
        HealthEvent(policy, Diagnosis(DiagnosisKind.UNDER_PROVISIONING, "split_bolt", now - 29,
                                      symptoms=(SymptomKind.BACK_PRESSURE,))),
        HealthEvent(policy, Action(ActionKind.SCALE, "split_bolt", now - 28,
                                   DiagnosisKind.UNDER_PROVISIONING, "backpressure 640 ms/s",
                                   current=2, target=4, policy=policy,
                                   status=ActionStatus.APPLIED)),
        HealthEvent(policy, Note(now - 20, "resumed: windows start now", policy)),
    ]
    with local_topology.state_spec.open() as state:
        topology_id = state.get("topologies", NAME).id
        HealthStore(state, NAME, topology_id).save(LoopState(), events)
        try:
            served = serve(tracker_app(local_topology.state_spec))
            session = browser.open_page(page_link(served.url, f"/ui/topologies/{NAME}?window=600"))
            wait_for(browser, session,
                     "document.querySelectorAll('#health-records tr[data-type]').length === 4")
            rows = json.loads(browser.evaluate(session, """JSON.stringify(
                [...document.querySelectorAll('#health-records tr[data-type]')].map(r => [
                    r.dataset.type, r.dataset.kind, r.children[2].textContent,
                    r.children[3].textContent]))"""))
            # newest first
            assert [r[:3] for r in rows] == [["note", "note", "–"],
                                             ["action", "scale", "split_bolt"],
                                             ["diagnosis", "under_provisioning", "split_bolt"],
                                             ["symptom", "back_pressure", "split_bolt"]]
            assert "applied: 2 → 4 instances" in rows[1][3] and "backpressure 640" in rows[1][3]
            assert "container_1_split_bolt_2" in rows[3][3] and "640.5" in rows[3][3]
            assert rows[0][3] == "resumed: windows start now"

            wait_for(browser, session, "document.querySelectorAll("
                                       "'#chart-rows .health-mark').length > 0")
            marks = {(c["component"], c["metric"]): sorted(c["marks"])
                     for c in charts(browser, session)}
            for metric in BOLT_CHARTS:  # the component's records, and topology-wide notes
                assert marks[("split_bolt", metric)] == ["action", "diagnosis", "note",
                                                         "symptom"], marks
                assert marks[("count_bolt", metric)] == ["note"], marks
            status = browser.evaluate(session,
                                      "document.getElementById('health-status').textContent")
            assert status.startswith("Health Manager: off") and "4 records kept" in status
            browser.screenshot(session, artifact(tmp_path, "tracker-ui-health.png"))
            assert browser.problems(session) == [], browser.log_tail()
        finally:
            state.delete(KIND, NAME)
