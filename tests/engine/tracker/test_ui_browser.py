"""The web page in a real browser: headless Chromium loads the page of the running
topology from the tracker, finds the DAG with every component, sees the counts grow
without a reload, shows the physical plan, exceptions and logs, the latencies of every
component and instance (complete for the spout, execute and process for the bolts),
raises no console error, and leaves a screenshot (``$HERON_TEST_ARTIFACTS/tracker-ui.png``
when that is set).
The topology list is loaded through `heron ui` (the page served apart from the tracker).

scripts/test.sh installs Chromium; without it these tests are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pytest

from engine.tools.ui.app import create_ui_app
from tests.browser import Chromium, find_chromium, png_size, wait_for
from tests.engine.tracker.conftest import (
    COMPONENTS,
    NAME,
    TOKEN,
    page_link,
    tracker_app,
    wait_until,
)
from tests.unavailable import unavailable

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture
def browser(tmp_path):
    path = find_chromium()
    if path is None:
        unavailable("Debian's chromium is not installed (scripts/test.sh installs it: "
                    "apt-get install chromium); the page's browser test is skipped")
    chrome = Chromium(path, tmp_path / "chromium")
    try:
        yield chrome
    finally:
        chrome.close()


def artifact(tmp_path: Path, name: str) -> Path:
    directory = Path(os.environ.get("HERON_TEST_ARTIFACTS") or tmp_path)
    directory.mkdir(parents=True, exist_ok=True)
    return directory / name


#: latency cells: (cell class, which components report it); values in ms, as `heron metrics`
LATENCIES = (("complete-latency", "spout"), ("execute-latency", "bolt"),
             ("process-latency", "bolt"))
#: a latency as the page and `heron metrics` show it: ms with three decimals
MS = re.compile(r"\d{1,3}(,\d{3})*\.\d{3}")
#: every component row and instance row: its kind and its latency cells' texts
LATENCY_ROWS = """JSON.stringify([...document.querySelectorAll(
    '#components tbody tr[data-component], #containers tr[data-instance]')].map(r => [
    r.dataset.instance ? 'instance' : 'component', r.dataset.instance || r.dataset.component,
    r.dataset.component === 'sentence_spout' ? 'spout' : 'bolt',
    ...CLASSES.map(c => r.querySelector('.' + c).textContent)]))""".replace(
    "CLASSES", json.dumps([cls for cls, _ in LATENCIES]))


def latencies_shown(rows: list[list[str]]) -> bool:
    """Whether every row shows a number in each latency its kind reports."""
    return bool(rows) and all(MS.fullmatch(text) for _, _, kind, *texts in rows
                              for text, (_, reports) in zip(texts, LATENCIES, strict=True)
                              if reports == kind)


def emitted(browser: Chromium, session: str) -> int:
    return int(browser.evaluate(session, """Number(document.querySelector(
        'svg.dag g.dag-node[data-component="sentence_spout"]').dataset.emitted || 0)"""))


def test_the_topology_page_shows_the_dag_and_live_counts(local_topology, serve, browser,
                                                         tmp_path, record_property):
    served = serve(tracker_app(local_topology.state_spec))
    session = browser.open_page(page_link(served.url, f"/ui/topologies/{NAME}"))
    browser.evaluate(session, "window.__sameDocument = true")

    wait_for(browser, session, "document.querySelectorAll('svg.dag g.dag-node').length === 3")
    dag = json.loads(browser.evaluate(session, """JSON.stringify({
        nodes: [...document.querySelectorAll('svg.dag g.dag-node')].map(g => [
            g.dataset.component, g.querySelector('text.name').textContent]),
        edges: [...document.querySelectorAll('svg.dag g.dag-edge')].map(g => [
            g.dataset.source, g.dataset.target, g.querySelector('text').textContent])})"""))
    assert sorted(n[0] for n in dag["nodes"]) == sorted(COMPONENTS)
    assert all(component == label for component, label in dag["nodes"])
    assert sorted(dag["edges"]) == [["sentence_spout", "split_bolt", "shuffle"],
                                    ["split_bolt", "count_bolt", "fields(word)"]]

    wait_for(browser, session, """Number(document.querySelector(
        'svg.dag g.dag-node[data-component="sentence_spout"]').dataset.emitted || 0) > 0""")
    first = emitted(browser, session)
    wait_for(browser, session, f"""Number(document.querySelector(
        'svg.dag g.dag-node[data-component="sentence_spout"]').dataset.emitted || 0) > {first}""",
             timeout=20)
    second = emitted(browser, session)
    assert second > first
    assert browser.evaluate(session, "window.__sameDocument") is True  # no reload happened

    wait_for(
        browser, session, "document.querySelectorAll('#exceptions tr[data-instance]').length > 0"
    )
    page = json.loads(
        browser.evaluate(
            session,
            """JSON.stringify({
        components: [...document.querySelectorAll('#components tbody tr')].map(r => [
            r.dataset.component, r.querySelector('.emitted').textContent,
            r.querySelector('.executed').textContent]),
        containers: [...document.querySelectorAll('#containers [data-stmgr]')].map(c => [
            c.dataset.stmgr, c.querySelectorAll('tr[data-instance]').length,
            c.querySelector('.bp-state').textContent]),
        instanceLogs: [...document.querySelectorAll('#containers tr[data-instance] a')].map(
            a => a.getAttribute('href')),
        headers: [...document.querySelectorAll('#components th')].map(h => h.textContent),
        instanceHeaders: [...document.querySelector('#containers [data-stmgr] table')
            .querySelectorAll('th')].map(h => h.textContent),
        exceptions: [...document.querySelectorAll('#exceptions tr[data-instance]')]
            .map(r => r.textContent),
        logfiles: document.querySelectorAll('#logfiles a').length,
        status: document.getElementById('status').textContent,
        clusterHidden: document.getElementById('cluster').hidden,
        checkpoints: [document.getElementById('checkpoints').hidden,
                      document.getElementById('checkpoints').dataset.effectivelyOnce],
        sourceLagHidden: document.getElementById('source-lag').hidden,
        logNodes: [...new Set([...document.querySelectorAll('#logfiles tbody tr')].map(
            r => r.children[3].textContent))],
        state: document.getElementById('state').textContent})""",
        )
    )
    assert [c[0] for c in page["components"]] == list(COMPONENTS)
    spout_row = page["components"][0]
    assert spout_row[1] != "–" and int(spout_row[1].replace(",", "")) > 0
    assert sorted((c[0], c[1]) for c in page["containers"]) == [("stmgr-1", 3), ("stmgr-2", 2)]
    assert all("backpressure" in c[2] for c in page["containers"])
    assert len(page["instanceLogs"]) == 5 and all(h.startswith("/topologies/logfile?")
                                                 for h in page["instanceLogs"])
    for header in ("complete latency ms", "execute latency ms", "process latency ms"):
        assert header in page["headers"]
    for header in ("complete ms", "execute ms", "process ms"):
        assert header in page["instanceHeaders"]
    assert any("splitter refuses" in e for e in page["exceptions"])
    assert page["logfiles"] >= 10
    assert page["status"].startswith("live") and page["state"] == "RUNNING"
    # the local scheduler: no cluster card, every log file on this machine
    assert page["clusterHidden"] is True and page["logNodes"] == ["this machine"]
    # at-least-once: it takes no checkpoints, so no Checkpoints card
    # (test_ui_checkpoints_browser.py shows one of an EFFECTIVELY_ONCE topology)
    assert page["checkpoints"] == [True, "false"], page["checkpoints"]
    # no Kafka spout reports lag: no Kafka lag card (test_ui_sourcelag_browser.py shows one)
    assert page["sourceLagHidden"] is True

    # latencies (ms, three decimals as `heron metrics` prints them): the spout's complete
    # latency, each bolt's execute and process latency, per component and per instance;
    # a latency a component does not report is "–"
    rows: list[list[str]] = []

    def shown() -> bool:
        rows[:] = json.loads(browser.evaluate(session, LATENCY_ROWS))
        return latencies_shown(rows)
    assert wait_until(shown, 20, 0.5), rows
    kinds = {(where, kind) for where, _, kind, *_ in rows}
    assert kinds == {("component", "spout"), ("component", "bolt"), ("instance", "spout"),
                     ("instance", "bolt")}, rows
    assert len([r for r in rows if r[0] == "component"]) == 3
    assert len([r for r in rows if r[0] == "instance"]) == 5
    for _, _, kind, *texts in rows:
        for text, (_, reports) in zip(texts, LATENCIES, strict=True):
            assert (MS.fullmatch(text) is not None) if reports == kind else text == "–", rows
    spout = next(r for r in rows if r[:2] == ["component", "sentence_spout"])
    assert float(spout[3].replace(",", "")) > 0  # complete latency: a round trip, not 0

    shot = browser.screenshot(session, artifact(tmp_path, "tracker-ui.png"))
    record_property("screenshot", str(shot))
    width, height = png_size(shot.read_bytes())
    assert width >= 800 and height >= 600 and shot.stat().st_size > 20_000
    assert browser.problems(session) == [], browser.log_tail()


def test_a_stuck_instance_is_marked_stale_on_the_page(local_topology, serve, browser):
    """An instance that stops reporting (stopped: neither dead nor publishing) shows its
    frozen figures as stale, on its component's row and its own, until it reports again."""
    from engine.common.process.spawn import read_pid_file

    served = serve(tracker_app(local_topology.state_spec))
    session = browser.open_page(page_link(served.url, f"/ui/topologies/{NAME}"))
    wait_for(browser, session, "document.querySelectorAll('#containers tr[data-instance]')"
                               ".length === 5")
    victim = browser.evaluate(session, """[...document.querySelectorAll(
        '#containers tr[data-instance]')].map(r => r.dataset.instance)
        .filter(i => i.includes('_count_bolt_')).sort()[0]""")
    proc = read_pid_file(local_topology.working_dir / "pids" / f"{victim}.pid")
    assert proc is not None, victim
    component_row = "#components tr[data-component=\"count_bolt\"]"
    proc.send_signal(signal.SIGSTOP)
    try:
        wait_for(browser, session, f"""document.querySelector('{component_row}')
            .classList.contains('stale')""", timeout=25)
        marks = json.loads(browser.evaluate(session, f"""JSON.stringify({{
            note: document.querySelector('{component_row} .last-error').textContent,
            rows: [...document.querySelectorAll('#containers tr[data-instance].stale')]
                .map(r => r.dataset.instance)}})"""))
        assert marks["rows"] == [victim], marks
        assert marks["note"].startswith(f"stale ({victim}: last reported "), marks
    finally:
        proc.send_signal(signal.SIGCONT)
    wait_for(browser, session, f"""!document.querySelector('{component_row}')
        .classList.contains('stale')""", timeout=25)
    assert browser.problems(session) == [], browser.log_tail()


def test_the_topology_list_through_heron_ui(local_topology, serve, browser, tmp_path):
    tracker = serve(tracker_app(local_topology.state_spec))
    ui = serve(create_ui_app(tracker.url, token=TOKEN))
    session = browser.open_page(page_link(ui.url, "/ui/"))
    wait_for(browser, session, f"!!document.querySelector('tr[data-topology=\"{NAME}\"]')")
    row = json.loads(browser.evaluate(session, f"""JSON.stringify((() => {{
        const r = document.querySelector('tr[data-topology="{NAME}"]');
        return [r.querySelector('a').getAttribute('href'), r.textContent];
    }})())"""))
    assert row[0] == f"/ui/topologies/{NAME}"
    assert "RUNNING" in row[1] and "running" in row[1]
    browser.screenshot(session, artifact(tmp_path, "tracker-ui-list.png"))
    assert browser.problems(session) == [], browser.log_tail()


def test_the_link_heron_tracker_prints_opens_the_page(local_topology, browser, tmp_path):
    """A real `heron tracker` (its own home, so its own token): the link it prints loads
    the list, which no longer shows the token, and the topology's page after it, with
    the token in an HttpOnly cookie script cannot read; a tab without it gets a 401."""
    import signal
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[3]
    out, err = tmp_path / "tracker.out", tmp_path / "tracker.err"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "engine.tools.cli.main", "tracker", "--port", "0",
             "--home", str(tmp_path / "home"), "--state-root",
             str(local_topology.state_spec.root), "--poll-interval", "1"],
            cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, stdout=stdout,
            stderr=stderr, start_new_session=True)
    try:
        found = wait_until(lambda: re.search(r"open: (\S+)", out.read_text()), 30)
        assert found, (out.read_text(), err.read_text())
        link = found.group(1)
        token = (tmp_path / "home" / "access-token").read_text().strip()
        assert link.endswith(f"/ui/?token={token}")
        base = link.split("/ui/")[0]
        bare = browser.open_page(f"{base}/topologies")  # no cookie yet: refused
        assert "missing or wrong access token" in browser.evaluate(bare, "document.body.innerText")
        session = browser.open_page(link)
        wait_for(browser, session, f"!!document.querySelector('tr[data-topology=\"{NAME}\"]')")
        assert browser.evaluate(session, "location.href") == f"{base}/ui/"
        assert browser.evaluate(session, "document.cookie") == ""  # HttpOnly
        browser.evaluate(session, f"location.href = '/ui/topologies/{NAME}'")
        wait_for(browser, session, "document.querySelectorAll('svg.dag g.dag-node').length === 3")
        assert browser.problems(bare) and browser.problems(session) == [], browser.log_tail()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, err.read_text()
        assert token not in err.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def test_the_page_shows_a_cluster_schedulers_jobs_and_recoveries(local_topology, serve,
                                                                  browser, tmp_path):
    """What /topologies/scheduler answers for a cluster topology (checked on real Slurm in
    tests/cluster) is drawn as the Cluster card: jobs with their nodes, excluded nodes,
    and the time each recovery took."""
    from engine.scheduler.slurm.scheduler import STATUS_FILE

    status_file = local_topology.working_dir / STATUS_FILE
    status_file.write_text(json.dumps({
        "scheduler": "slurm",
        "jobs": [{"container": 0, "job_id": 41, "node": "node1", "state": "RUNNING",
                  "incarnation": 0},
                 {"container": 1, "job_id": 57, "node": "node3", "state": "RUNNING",
                  "incarnation": 1}],
        "excluded": ["node2"],
        "recoveries": [{"container": 1, "cause": "node node2 lost (not responding)",
                        "seconds": 16.4, "measured_from": "last report",
                        "detected_after": 7.2, "running_after": 11.0},
                       {"container": 0, "cause": "NODE_FAIL on node1", "seconds": 9.0}]}))
    try:
        served = serve(tracker_app(local_topology.state_spec))
        session = browser.open_page(page_link(served.url, f"/ui/topologies/{NAME}"))
        wait_for(browser, session, "!document.getElementById('cluster').hidden")
        card = json.loads(browser.evaluate(session, """JSON.stringify({
            jobs: [...document.querySelectorAll('#cluster-jobs tbody tr')].map(
                r => [...r.children].map(c => c.textContent)),
            recoveries: [...document.querySelectorAll('#cluster-recoveries tbody tr')].map(
                r => [...r.children].map(c => c.textContent)),
            note: document.querySelector('#cluster-status p').textContent})"""))
        assert card["jobs"] == [["0", "41", "node1", "RUNNING", "0"],
                                ["1", "57", "node3", "RUNNING", "1"]]
        assert card["recoveries"] == [
            ["1", "node node2 lost (not responding)", "7.2 s", "11.0 s", "16.4 s",
             "its last report"],
            ["0", "NODE_FAIL on node1", "–", "–", "9.0 s", "the loss noticed"]]
        assert "slurm scheduler" in card["note"] and "excluded nodes: node2" in card["note"]
        browser.screenshot(session, artifact(tmp_path, "tracker-ui-cluster.png"))
        assert browser.problems(session) == [], browser.log_tail()
    finally:
        status_file.unlink()
