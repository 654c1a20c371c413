"""The differ at scale: the Python driver never holds a capture. 400,000 captured rows
per engine diff on ``local[2]`` while the driver's memory does not grow with them, and
one changed row among them is found and shown.

The 5,000,000-row figure (wall time and driver RSS) is a benchmark, not a test:
``python bench/conformance_diff.py`` (bench/README.md). Here the bound calibrates
itself: the same subprocess first diffs 1,000 rows, then the 400,000, and its peak RSS
(``ru_maxrss``, the driver alone: Spark's JVM is another process) may grow by less than
half of one side's capture bytes between the two. A driver that read a capture into
Python (as the differ before the Spark design did, about 2.9 KB of RSS a row) would
grow by several times the capture's size and fail.

The captures come from a generator (``conformance.synthetic``), not from minutes of
engine runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.canonical import canonical_value
from conformance.synthetic import synthetic_row, write_synthetic

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROWS = 400_000
CHANGED = 314_159
BASELINE_ROWS = 1_000
REPO = Path(__file__).resolve().parents[2]

DIFF_ONLY = """
import json, resource, sys
from compat.spark_session import spark_session
from conformance.diff import diff_captures
from conformance.model import Comparison

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

spark = spark_session("local[2]", app_name="diff-scale",
                      conf={"spark.driver.memory": "2g"})
small = diff_captures(spark, [sys.argv[1]], [sys.argv[2]], Comparison(),
                      left="storm", right="heron", sample_limit=5)
baseline = peak_mb()
result = diff_captures(spark, [sys.argv[3]], [sys.argv[4]], Comparison(),
                       left="storm", right="heron", sample_limit=5)
spark.stop()
print(json.dumps({"small": small.to_json(), "result": result.to_json(),
                  "baseline_rss_mb": baseline, "peak_rss_mb": peak_mb()}))
"""


def test_a_large_diff_runs_in_a_driver_that_never_holds_a_capture(tmp_path):
    small_left, small_right = tmp_path / "small-storm.jsonl", tmp_path / "small-heron.jsonl"
    write_synthetic(small_left, BASELINE_ROWS, engine="storm")
    write_synthetic(small_right, BASELINE_ROWS, engine="heron", reverse=True)
    left, right = tmp_path / "storm.jsonl", tmp_path / "heron.jsonl"
    size = write_synthetic(left, ROWS, engine="storm")
    write_synthetic(right, ROWS, engine="heron", reverse=True, differ_at=CHANGED)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    out = subprocess.run([sys.executable, "-c", DIFF_ONLY, str(small_left), str(small_right),
                          str(left), str(right)], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=560)
    assert out.returncode == 0, out.stderr[-3000:]
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["small"]["observed"] == "exact"
    result = data["result"]
    growth_mb = data["peak_rss_mb"] - data["baseline_rss_mb"]
    capture_mb = size / 2**20
    assert growth_mb < capture_mb / 2, (growth_mb, capture_mb)
    counts = result["counts"]
    assert (counts["rows_left"], counts["rows_right"]) == (ROWS, ROWS)
    assert (counts["missing"], counts["novel_extras"], counts["duplicate_extras"],
            counts["differing"]) == (1, 1, 0, 2)
    assert result["observed"] == "divergent"
    original = [canonical_value(v) for v in synthetic_row(CHANGED)]
    changed = [original[0], original[1] + 1, original[2]]
    assert result["samples"] == [
        {"row": ["count", "default", *original], "left": 1, "right": 0},
        {"row": ["count", "default", *changed], "left": 0, "right": 1},
    ]
    assert result["inputs"]["storm"] == {"files": 1, "bytes": size, "rows": ROWS}
    assert result["spark_seconds"] > 0
    print(f"{ROWS:,} rows per engine ({capture_mb:.0f} MB a side): diff "
          f"{result['spark_seconds']:.0f} s, driver RSS {data['baseline_rss_mb']:.0f} MB "
          f"after 1,000 rows, {data['peak_rss_mb']:.0f} MB after {ROWS:,}")
