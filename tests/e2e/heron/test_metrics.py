"""Metrics on the heron engine: the counts the Topology Master reports equal what the
topology really did in a finite at-least-once run; every Metrics Manager serves them in
Prometheus text format (parsed with prometheus_client's own parser); ``heron metrics``
prints them per component and per instance."""

from __future__ import annotations

import collections
import json
import signal
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from engine.common.security.access_token import default_home, load_or_create
from engine.tools.cli.main import main
from tests.e2e.heron.helpers import PROJECTS, HeronRun, leaf_tuples, wait_until

pytestmark = pytest.mark.timeout(180)

LIMIT = 400


def scrape(url: str) -> dict[tuple[str, str], float]:
    """{(metric family, instance): value} from one Prometheus endpoint, asked with the
    user's access token (the Metrics Manager of a `heron run` takes the environment's
    Heron home's, engine/common/security/access_token.py)."""
    token = load_or_create(default_home())
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    text = urllib.request.urlopen(request, timeout=10).read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, sample.labels["instance"])] = sample.value
    return out


def test_reported_counts_equal_what_happened_and_prometheus_serves_them(tmp_path,
                                                                      isolated_imports):
    out = tmp_path / "ledger"
    run = HeronRun(PROJECTS / "acking", "e2e_recovery", tmp_path / "run",
                   options={"e2e.limit": LIMIT, "e2e.out": str(out), "e2e.rate": 200})
    try:
        run.start()
        urls_dir = run.working_dir / "metrics"
        assert wait_until(lambda: len(list(urls_dir.glob("metricsmgr-*.url"))) == 2, timeout=20)
        urls = [p.read_text().strip() for p in sorted(urls_dir.glob("metricsmgr-*.url"))]
        # wait until both containers' instances have published at least once
        scraped: dict = {}

        def every_task_seen() -> bool:
            scraped.clear()
            for url in urls:
                scraped.update(scrape(url))
            return len({i for (name, i) in scraped if name == "heron_emit_count"}) == 6
        assert wait_until(every_task_seen, timeout=30), sorted(scraped)[:20]
        assert all(scraped[(name, i)] > 0 for (name, i) in scraped
                   if name == "heron_rss_bytes"), "every instance reports its memory"
        # bolts report execute and process latency, spouts complete latency (ms)
        latencies = {}

        def latencies_seen() -> bool:
            latencies.clear()
            for url in urls:
                latencies.update({k: v for k, v in scrape(url).items() if "latency" in k[0]})
            names = {(n, i.split("_")[2]) for n, i in latencies}
            return {("heron_execute_latency", "relay"), ("heron_process_latency", "relay"),
                    ("heron_complete_latency", "source")} <= names
        assert wait_until(latencies_seen, timeout=20), sorted(latencies)
        assert all(v >= 0 for v in latencies.values())
        # without the access token: a 401 and no metrics, counted by the Metrics Manager
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urls[0], timeout=10)
        assert refused.value.code == 401 and b"heron_" not in refused.value.read()
        # heron metrics, while it runs: per component and per instance, and as JSON
        cli = CliRunner()
        state = ["--state-root", str(run.working_dir / "state")]
        # the Topology Master has them once the Metrics Managers forwarded (every second)
        table = wait_until(lambda: (r := cli.invoke(main, ["metrics", "e2e_recovery", *state]))
                           and "source" in r.output and "sink" in r.output and r, timeout=20)
        assert table and table.exit_code == 0, table
        for expected in ("source", "relay", "sink", "stream managers", "Prometheus"):
            assert expected in table.output

        def refusals() -> int:
            raw = json.loads(cli.invoke(main, ["metrics", "e2e_recovery", "--json",
                                               *state]).output)
            return sum(int(v.get("__prometheus-refused", 0)) for v in raw.values())
        assert wait_until(lambda: refusals() == 1, timeout=10)
        per_instance = cli.invoke(main, ["metrics", "e2e_recovery", "relay", "--instances",
                                         *state])
        assert per_instance.exit_code == 0, per_instance.output
        assert per_instance.output.count("container_") == 2
        unknown = cli.invoke(main, ["metrics", "e2e_recovery", "nosuch", *state])
        assert unknown.exit_code == 1 and "nosuch" in unknown.output
        # a stuck instance (stopped, so it neither dies nor publishes): its figures are
        # marked stale, with their age, until it publishes again
        stuck_name = next(n for n in sorted(run.record_processes()) if "_relay_" in n)
        stuck = run.processes[stuck_name]
        stuck.send_signal(signal.SIGSTOP)
        try:
            marked = wait_until(lambda: (r := cli.invoke(main, [
                "metrics", "e2e_recovery", "relay", "--instances", *state]))
                and f"stale {stuck_name}: last reported" in r.output and r, timeout=20)
            assert marked, f"{stuck_name} never shown stale"
            as_json = json.loads(cli.invoke(main, ["metrics", "e2e_recovery", "relay", "--json",
                                                   *state]).output)
            ages = {k.split("/", 1)[1]: float(v["__report-age"]) for k, v in as_json.items()}
            assert ages[stuck_name] > 5 and all(
                age <= 5 for name, age in ages.items() if name != stuck_name), ages
        finally:
            stuck.send_signal(signal.SIGCONT)
        assert wait_until(lambda: f"stale {stuck_name}:" not in cli.invoke(main, [
            "metrics", "e2e_recovery", "relay", "--instances", *state]).output,
            timeout=20), "the instance's figures stayed stale"
        result = run.finish(time_limit=120)
    finally:
        run.close()
    assert result.reason == "finished", (result.error, result.log_dir)
    components = result.components
    # what the spouts' ledgers say they did (a tree that was slow to start can time out
    # and replay: the counts must say so too)
    events = [json.loads(line) for path in sorted(out.glob("*.jsonl"))
              for line in Path(path).read_text().splitlines()]
    kinds = collections.Counter(e["event"] for e in events)
    assert components["source"].emitted == kinds["emit"] >= 2 * LIMIT
    assert components["source"].acked == kinds["ack"] == 2 * LIMIT
    assert components["source"].failed == kinds["fail"] == kinds["emit"] - 2 * LIMIT
    # what the bolts executed and emitted: one output per input, every input acked
    sink_rows = leaf_tuples(result, "sink")
    relay = components["relay"]
    assert relay.executed == relay.emitted == relay.acked >= 2 * LIMIT
    assert components["sink"].executed == len(sink_rows) == components["sink"].acked
    assert {row[0] for row in sink_rows} == set(range(LIMIT))
    assert run.alive() == []
