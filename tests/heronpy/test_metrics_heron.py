"""A heronpy topology's own metrics on the heron engine (real processes): what its
components and task hooks register through heronpy's context reaches every Metrics
Manager's Prometheus endpoint (``heron_user_*``) and ``heron metrics``, with the values
the run produced (Heron's word count: 600 words, each acked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.tools.cli.main import main
from tests.e2e.heron.helpers import HeronRun, wait_until
from tests.e2e.heron.test_metrics import scrape

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

PROJECT = Path(__file__).parent / "examples"
NAME = "word_count_topology"


def test_user_metrics_and_hook_counts_reach_prometheus_and_heron_metrics(tmp_path,
                                                                       isolated_imports):
    run = HeronRun(PROJECT, NAME, tmp_path / "run",
                   options={"heron.metrics.export.interval.sec": 1})
    try:
        run.start()
        urls_dir = run.working_dir / "metrics"
        assert wait_until(lambda: list(urls_dir.glob("metricsmgr-*.url")), timeout=20)
        scraped: dict = {}

        def of(family: str) -> dict[str, float]:
            return {i: v for (name, i), v in scraped.items() if name == family}

        def all_acked() -> bool:  # the hook's running totals: every word acked
            scraped.clear()
            for path in urls_dir.glob("metricsmgr-*.url"):
                scraped.update(scrape(path.read_text().strip()))
            return (sum(of("heron_user_hook_spout_ack").values()) == 600
                    and sum(of("heron_user_hook_bolt_execute").values()) == 600)
        assert wait_until(all_acked, timeout=45), sorted(k for k in scraped if "user" in k[0])
        assert len(of("heron_user_hook_spout_ack")) == 2  # per spout instance
        assert sorted(of("heron_user_hook_prepare").values()) == [1.0] * 4
        assert all(4.0 <= v <= 5.0 for v in of("heron_user_word_length").values()), \
            of("heron_user_word_length")  # the mean of hello bye good bad heron storm

        # the Topology Master has them once the Metrics Managers forwarded them
        state = ["--state-root", str(run.working_dir / "state")]
        figures: dict = {}

        def total(component: str, metric: str) -> int:
            return sum(int(v.get(metric, 0)) for k, v in figures.items()
                       if k.startswith(f"{component}/"))

        def reported() -> bool:
            result = CliRunner().invoke(main, ["metrics", NAME, "--json", *state])
            assert result.exit_code == 0, result.output
            figures.clear()
            figures.update(json.loads(result.output))
            return (total("count_bolt", "user/hook/bolt_ack") == 600
                    and total("word_spout", "user/hook/spout_ack") == 600)
        assert wait_until(reported, timeout=20), figures
        bolts = [v for k, v in figures.items() if k.startswith("count_bolt/")]
        assert len(bolts) == 2
        assert all("user/words" in b and "user/word-length" in b for b in bolts)
    finally:
        run.close()
