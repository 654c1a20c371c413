"""The diff and the Summingbird batch platform on a real Spark standalone cluster (a
master and two workers, ``spark_cluster``): the same verdicts as on ``local[2]``, with
executors on both workers doing the work and, by the application's REST API, reading
the per-task capture files (input bytes close to their size).

Each run is a ``heron-conformance`` process of its own (one SparkContext per process:
this test process already holds the local one), watched through the master's JSON status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conformance.capture import capture_files
from conformance.catalogue import case_named
from conformance.diff import diff_captures

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
        # each engine's capture is a directory of per-task files
        files = capture_files(captures / run["engine"])
        assert len(files) >= 2, files
        local = diff_captures(spark, [captures / "expected.jsonl"],
                              [captures / run["engine"]], comparison,
                              left="expected", right=run["engine"])
        assert local.observed.value == run["diff"]["observed"]
        assert vars(local.counts) == run["diff"]["counts"]
        assert run["diff"]["inputs"][run["engine"]] == {
            "files": len(files), "bytes": sum(f.stat().st_size for f in files),
            "rows": local.counts.rows_right}
    (pair,) = case["pairs"]
    local = diff_captures(spark, [captures / "storm"], [captures / "heron"],
                          comparison, left="storm", right="heron")
    assert (pair["verdict"], pair["diff"]["observed"]) == ("pass", local.observed.value)
    assert vars(local.counts) == pair["diff"]["counts"]
    _executors_on_both_workers_read_the_captures(spark_cluster, captures)


#: a diff of two capture directories on the cluster, in a process of its own with the
#: application UI on (for its REST API); prints the result and the executors as JSON
PROBE = """
import json, sys
from compat.spark_session import spark_session
from conformance.capture import capture_files
from conformance.diff import diff_captures
from conformance.model import Comparison
from conformance.spark_cluster import application_executors
master, port, left, right = sys.argv[1:5]
spark = spark_session(master, app_name="capture-input-probe", conf={
    "spark.ui.enabled": "true", "spark.ui.port": port,
    "spark.scheduler.minRegisteredResourcesRatio": "1.0",
    "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s"})
result = diff_captures(spark, [left], [right], Comparison(), left="storm", right="heron")
print(json.dumps({"observed": result.observed.value, "inputs": result.inputs,
                  "executors": application_executors(spark)}))
spark.stop()
"""


def _executors_on_both_workers_read_the_captures(cluster, captures: Path) -> None:
    """The application's REST API (``/api/v1/applications/<id>/executors``) shows an
    executor on each worker that read capture files, and all of them together read about
    as many bytes as the capture directories hold."""
    from conformance.spark_cluster import free_port

    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    began = time.monotonic()
    probe = subprocess.run([sys.executable, "-c", PROBE, cluster.master_url, str(free_port()),
                            str(captures / "storm"), str(captures / "heron")],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert probe.returncode == 0, probe.stderr[-3000:]
    print(f"\nthe probe's diff on the cluster took {time.monotonic() - began:.1f}s")
    report = json.loads(probe.stdout.strip().splitlines()[-1])
    assert report["observed"] == "exact"
    size = sum(f.stat().st_size for side in ("storm", "heron")
               for f in capture_files(captures / side))
    assert size == report["inputs"]["storm"]["bytes"] + report["inputs"]["heron"]["bytes"]
    read = {}
    for executor in report["executors"]:
        if executor["id"] == "driver":
            continue
        worker = cluster.worker_of(executor)
        assert worker is not None, executor
        read[worker] = read.get(worker, 0) + int(executor["totalInputBytes"])
    # an executor on each of the two workers read some of the captures
    assert len(read) == 2 and all(n > 0 for n in read.values()), (read, size)
    # ...and between them about what the files hold: Hadoop's line reader counts what it
    # reads, which for whole small files is their size; the bounds (half to twice) leave
    # room for a reader going past a split's end or a stage recomputed after a lost
    # executor, and still fail when the executors did not read the files (0 bytes, e.g.
    # the driver shipping the rows) or read them many times over
    total = sum(read.values())
    print(f"\ncaptures: {size:,} bytes in per-task files; executors read {total:,} "
          f"({', '.join(f'{n:,}' for n in sorted(read.values()))} per worker)")
    assert size / 2 <= total <= 2 * size, (total, size, read)


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
