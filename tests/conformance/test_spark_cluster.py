"""The diff and the Summingbird batch platform on a real Spark standalone cluster (a
master and two workers, ``spark_cluster``): the same verdicts as on ``local[2]``, with
executors on both workers doing the work.

Each run is a ``heron-conformance`` process of its own (one SparkContext per process:
this test process already holds the local one), watched through the master's JSON status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conformance.diff import diff_captures
from conformance.catalogue import case_named

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

REPO = Path(__file__).resolve().parents[2]


def run_on_cluster(cluster, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    """``heron-conformance ARGS --spark-master <cluster>``; also the most cores each
    worker had in use while it ran (an executor of the run on that worker)."""
    busiest: dict[str, int] = {}
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.25):
            try:
                for worker in cluster.status()["workers"]:
                    busiest[worker["id"]] = max(busiest.get(worker["id"], 0),
                                                int(worker["coresused"]))
            except OSError:
                pass

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    try:
        result = subprocess.run([sys.executable, "-m", "conformance.cli", *args,
                                 "--spark-master", cluster.master_url],
                                cwd=REPO, env=env, capture_output=True, text=True,
                                timeout=360)
    finally:
        done.set()
        watcher.join()
    return result, busiest


def test_the_cluster_has_two_alive_workers(spark_cluster):
    status = spark_cluster.status()
    assert spark_cluster.master_url.startswith("spark://127.0.0.1:")
    workers = [w for w in status["workers"] if w["state"] == "ALIVE"]
    assert len(workers) == 2
    assert all(w["cores"] == 1 and w["host"] == "127.0.0.1" for w in workers)


def test_a_conformance_case_on_the_cluster_has_the_local_verdicts(spark_cluster, spark,
                                                                  tmp_path):
    report = tmp_path / "report"
    result, busiest = run_on_cluster(spark_cluster, "run", "--cases", "^bolt_emits_twice$",
                                     "--engines", "storm,heron", "--report", str(report))
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads((report / "results.json").read_text())
    assert data["environment"]["spark_master"] == spark_cluster.master_url
    # executors on both workers did the diffs
    assert len(busiest) == 2 and all(n >= 1 for n in busiest.values()), busiest
    (case,) = data["cases"]
    assert case["verdict"] == "pass"
    # the same captures diffed on local[2] give the same verdicts and counts
    captures = report / "captures" / "r0" / "bolt_emits_twice"
    comparison = case_named("bolt_emits_twice").comparison
    for run in case["runs"]:
        local = diff_captures(spark, [captures / "expected.jsonl"],
                              [captures / f"{run['engine']}.jsonl"], comparison,
                              left="expected", right=run["engine"])
        assert local.observed.value == run["diff"]["observed"]
        assert vars(local.counts) == run["diff"]["counts"]
        assert run["diff"]["inputs"][run["engine"]]["bytes"] == (
            captures / f"{run['engine']}.jsonl").stat().st_size
    (pair,) = case["pairs"]
    local = diff_captures(spark, [captures / "storm.jsonl"], [captures / "heron.jsonl"],
                          comparison, left="storm", right="heron")
    assert (pair["verdict"], pair["diff"]["observed"]) == ("pass", local.observed.value)
    assert vars(local.counts) == pair["diff"]["counts"]


def test_a_summingbird_batch_job_on_the_cluster_has_the_local_verdicts(spark_cluster, spark,
                                                                       tmp_path):
    from click.testing import CliRunner

    from conformance.cli import main

    args = ["summingbird", "--jobs", "^(word_count|left_join)$", "--platforms",
            "memory,batch", "--seed", "5", "--size", "30"]
    result, busiest = run_on_cluster(spark_cluster, *args, "--report",
                                     str(tmp_path / "cluster"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(busiest) == 2 and all(n >= 1 for n in busiest.values()), busiest
    local = CliRunner().invoke(main, [*args, "--report", str(tmp_path / "local")],
                               catch_exceptions=False)
    assert local.exit_code == 0, local.stderr

    def verdicts(report: Path) -> dict:
        data = json.loads((report / "results.json").read_text())
        return {(c["case"], r["engine"]): (r["verdict"], (r["diff"] or {}).get("counts"))
                for c in data["cases"] for r in c["runs"]}

    on_cluster = verdicts(tmp_path / "cluster")
    assert on_cluster == verdicts(tmp_path / "local")
    assert {v for v, _ in on_cluster.values()} == {"pass"}
    assert ("summingbird_word_count", "batch") in on_cluster
