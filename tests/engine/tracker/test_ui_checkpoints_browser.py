"""The Checkpoints card in a real browser, over a real EFFECTIVELY_ONCE topology (issue 29):
the stateful word count (tests/e2e/heron/projects/stateful) checkpointing every second,
whose counting bolt raises once, so the topology rolls back. Headless Chromium loads its
page from the tracker and finds the checkpoints completed and growing without a reload,
the consistent checkpoints, the restores with their reasons (the start and the rollback
after the injected failure) and each task's state size; the tracker's
``/topologies/checkpoints`` answers the same figures. The at-least-once tracker topology
has no such card (test_ui_browser.py checks it is hidden).

scripts/test.sh installs Chromium; without it this test is skipped with the reason.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.common.launch import StateManagerSpec, Submission
from tests.browser import DevToolsError, wait_for
from tests.engine.tracker.conftest import client, page_link, tracker_app
from tests.engine.tracker.test_ui_browser import artifact, browser  # noqa: F401 (fixture)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "stateful"
NAME = "stateful_wordcount"
#: instances of the word count: (component, stateful) for each of its two tasks
COMPONENTS = {"sentences": True, "split": False, "count": True}


@pytest.fixture
def stateful_topology() -> Iterator[Any]:
    """The stateful word count running effectively-once on the local state manager: a
    corpus it does not finish during the test, read slowly (little CPU), and a counting
    task that raises once after 600 words (a flag file makes it once per run)."""
    from engine.common.local_run import HeronLocalRun
    from engine.common.submission import load_topology

    saved_path, saved_modules = list(sys.path), set(sys.modules)
    working_dir = Path(tempfile.mkdtemp(prefix="tracker-ckpt-ui-"))
    options = {"e2e.sentences": 10_000_000, "e2e.per_call": 2, "e2e.pause_ms": 20,
               "e2e.raise_after": 600, "e2e.raise_flag": str(working_dir / "raised")}
    loaded = load_topology(PROJECT, name=NAME, cli_options=options)
    runner = HeronLocalRun(loaded, Submission(project=str(PROJECT), name=NAME, options=options),
                           working_dir=working_dir,
                           state_spec=StateManagerSpec(kind="local",
                                                       root=str(working_dir / "state")))
    try:
        runner.start()
        yield runner
    finally:
        runner.stop(drain=0)
        shutil.rmtree(working_dir, ignore_errors=True)
        sys.path[:] = saved_path
        for name in set(sys.modules) - saved_modules:
            del sys.modules[name]


#: what the card shows, read from the page
CARD = """JSON.stringify((() => {
    const card = document.getElementById('checkpoints');
    const rows = (id) => [...document.querySelectorAll(
        '#' + id + ' tbody tr[data-' + KEY[id] + ']')];
    return {
        hidden: card.hidden, mode: card.dataset.effectivelyOnce,
        figures: Object.fromEntries([...card.querySelectorAll('[data-figure]')].map(
            f => [f.dataset.figure, f.querySelector('b').textContent])),
        consistent: rows('checkpoint-list').map(r => r.dataset.checkpoint),
        restores: rows('checkpoint-restores').map(r => [...r.children].map(c => c.textContent)),
        tasks: rows('checkpoint-tasks').map(r => [r.dataset.instance, r.children[1].textContent,
            r.querySelector('.state-bytes').textContent]),
        stmgrs: rows('checkpoint-stmgrs').map(r => r.dataset.stmgr)};
})())""".replace(
    "KEY",
    json.dumps(
        {
            "checkpoint-list": "checkpoint",
            "checkpoint-restores": "kind",
            "checkpoint-tasks": "instance",
            "checkpoint-stmgrs": "stmgr",
        }
    ),
)


def shown(browser: Any, session: str, expression: str, timeout: float) -> None:  # noqa: F811 (a fixture imported above)
    """``wait_for``, failing with what the card shows and the page's problems."""
    try:
        wait_for(browser, session, expression, timeout=timeout)
    except DevToolsError as exc:
        page = browser.evaluate(session, "document.getElementById('checkpoints') ? "
                                         + CARD + " : document.body.innerText")
        raise AssertionError(f"{exc}\npage: {page}\nproblems: {browser.problems(session)}"
                             ) from None


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_checkpoints_card_shows_checkpoints_restores_and_state_per_task(
        stateful_topology, serve, browser, tmp_path):  # noqa: F811 (fixture)
    served = serve(tracker_app(stateful_topology.state_spec))
    session = browser.open_page(page_link(served.url, f"/ui/topologies/{NAME}"))
    browser.evaluate(session, "window.__sameDocument = true")

    # the rollback after the injected failure, with its reason, once checkpoints complete
    # and both counting tasks hold state (what is asserted below: waiting for less raced)
    shown(browser, session, """[...document.querySelectorAll(
        '#checkpoint-restores tr[data-kind="rollback"]')].some(
        r => r.textContent.includes('injected failure'))
        && Number((document.querySelector('[data-figure="completed"] b') || {}).textContent) >= 1
        && [...document.querySelectorAll('#checkpoint-tasks tbody tr[data-instance]')].filter(
        r => r.children[1].textContent === 'count').length === 2
        && [...document.querySelectorAll('#checkpoint-tasks tbody tr[data-instance]')].filter(
        r => r.children[1].textContent === 'count').every(
        r => Number(r.querySelector('.state-bytes').textContent.replace(/,/g, '')) > 0)""",
          timeout=45)
    card = json.loads(browser.evaluate(session, CARD))
    assert card["hidden"] is False and card["mode"] == "true"
    figures = card["figures"]
    assert number(figures["completed"]) >= 1 and number(figures["restores"]) >= 2
    assert number(figures["rollbacks"]) >= 1 and figures["abandoned"].isdigit()
    assert " ms, " in figures["last"] and figures["last"].endswith(" bytes"), figures
    assert card["consistent"], card
    # newest first, the oldest the restore at start (to the empty state: no checkpoint yet)
    assert card["restores"][-1][1] == "empty state", card["restores"]
    rollback = next(r for r in card["restores"] if r[0] == "rollback")
    assert "injected failure" in rollback[2], card["restores"]
    # every task has a row; the stateful components' count tasks hold state
    assert sorted(c for _, c, _ in card["tasks"]) == sorted(
        f"{c}{'' if s else ' (stateless)'}" for c, s in COMPONENTS.items() for _ in range(2))
    assert all(number(b) > 0 for _, c, b in card["tasks"] if c == "count"), card["tasks"]
    assert sorted(card["stmgrs"]) == ["stmgr-1", "stmgr-2"]

    # refreshed in place, like the live metrics: more checkpoints complete, no reload
    before = number(figures["completed"])
    shown(browser, session, f"""Number(document.querySelector(
        '[data-figure="completed"] b').textContent.replace(/,/g, '')) > {before}""", timeout=15)
    assert browser.evaluate(session, "window.__sameDocument") is True

    # the API says the same: every task with its task id, stateful or not
    with client(served.url) as http:
        answer = http.get("/topologies/checkpoints", params={"topology": NAME}).json()
    assert answer["effectively_once"] is True and answer["interval_secs"] == 1.0
    assert answer["tmanager"]["completed"] >= before and answer["tmanager"]["rollbacks"] >= 1
    assert {(t["component"], t["stateful"]) for t in answer["tasks"]} == set(COMPONENTS.items())
    assert all(t["task_id"] is not None and t["saves"] >= 1 for t in answer["tasks"])
    assert answer["consistent"][0]["bytes"] > 0

    browser.screenshot(session, artifact(tmp_path, "tracker-ui-checkpoints.png"))
    # A Topology Master that does not answer in time (a loaded machine, while it rolls
    # back) makes the tracker answer 503, which the browser logs by itself; the page
    # keeps what it drew and says it is not updated. Anything else is a problem.
    problems = [p for p in browser.problems(session)
                if "the server responded with a status of 503" not in p]
    assert problems == [], browser.log_tail()
