"""The Kafka lag card in a real browser (issue 39): headless Chromium loads the page of
the tracker test topology, submitted with no process started, whose stand-in Topology
Master (test_api_sourcelag.py's) answers what a Kafka spout reports. The card shows the
lag per partition with the offsets and the total per spout, follows a change of the lag
without a reload, and hides itself when no instance reports lag any more (as a topology
without Kafka spouts has none: test_ui_browser.py checks it hidden for the running
topology).

scripts/test.sh installs Chromium; without it this test is skipped with the reason.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser import DevToolsError, wait_for
from tests.engine.tracker.conftest import NAME, page_link, tracker_app
from tests.engine.tracker.test_api_sourcelag import FIGURES, SPOUT, P, standin_tm, submitted  # noqa: F401
from tests.engine.tracker.test_ui_browser import artifact, browser  # noqa: F401 (fixture)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

#: what the card shows, read from the page
CARD = """JSON.stringify((() => {
    const card = document.getElementById('source-lag');
    const rows = (id) => [...document.querySelectorAll(
        '#' + id + ' tbody tr[data-' + KEY[id] + ']')]
        .map(r => [...r.children].map(c => c.textContent));
    return {hidden: card.hidden, note: document.getElementById('source-lag-note').textContent,
            components: rows('source-lag-components'), partitions: rows('source-lag-partitions'),
            stale: [...document.querySelectorAll('#source-lag-partitions tr.stale')].map(
                r => r.dataset.instance)};
})())""".replace(
    "KEY", json.dumps({"source-lag-components": "component", "source-lag-partitions": "partition"})
)


def shown(browser: Any, session: str, expression: str, timeout: float = 20) -> None:  # noqa: F811 (a fixture imported above)
    """``wait_for``, failing with what the card shows and the page's problems."""
    try:
        wait_for(browser, session, expression, timeout=timeout)
    except DevToolsError as exc:
        page = browser.evaluate(session, CARD)
        raise AssertionError(f"{exc}\ncard: {page}\nproblems: {browser.problems(session)}"
                             ) from None


def test_the_kafka_lag_card_shows_lag_per_partition_follows_it_and_hides(
        submitted, standin_tm, serve, browser, tmp_path):  # noqa: F811 (fixtures)
    spec, _, root = submitted
    served = serve(tracker_app(spec, home=root / "home"))
    session = browser.open_page(page_link(served.url, f"/ui/topologies/{NAME}"))
    browser.evaluate(session, "window.__sameDocument = true")

    shown(browser, session, "!document.getElementById('source-lag').hidden")
    card = json.loads(browser.evaluate(session, CARD))
    assert card["components"] == [[SPOUT, "12,005", "12,000", "3", "orders"]]
    assert card["partitions"] == [
        [SPOUT, "container_1_sentence_spout_3", "orders", "0", "5", "1,095", "1,090", "1,100"],
        [SPOUT, "container_2_sentence_spout_6", "orders", "1", "12,000", "–", "–", "–"],
        [SPOUT, "container_1_sentence_spout_3", "orders", "2", "0", "–", "–", "–"]]
    assert card["stale"] == ["container_2_sentence_spout_6"]  # frozen figures marked
    assert "log end offset minus the spout's position" in card["note"]
    browser.screenshot(session, artifact(tmp_path, "tracker-ui-kafka-lag.png"))

    # the spout catches up: redrawn in place with the other live figures
    caught_up = {k: dict(v) for k, v in FIGURES.items()}
    caught_up[(SPOUT, "container_2_sentence_spout_6")][P + "orders/partition_1/spoutLag"] = "7"
    standin_tm.figures = caught_up
    shown(browser, session, """(document.querySelector(
        '#source-lag-components tr[data-component] td.lag') || {}).textContent === '12'""")

    # no instance reports lag any more: the card hides
    standin_tm.figures = {k: v for k, v in FIGURES.items() if k[0] != SPOUT}
    shown(browser, session, "document.getElementById('source-lag').hidden")
    assert browser.evaluate(session, "window.__sameDocument") is True
