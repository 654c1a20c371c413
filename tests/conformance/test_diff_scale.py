"""The differ at scale: 5,000,000 captured rows per engine diff on ``local[2]`` while the
Python driver stays small, and one changed row among them is found and shown.

The captures come from a generator (``conformance.synthetic``), not from minutes of
engine runs; the diff runs in a subprocess that does nothing else, so its own peak RSS
(``ru_maxrss``) is the driver's.
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

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROWS = 5_000_000
CHANGED = 3_141_592
DRIVER_RSS_LIMIT_MB = 600
REPO = Path(__file__).resolve().parents[2]

DIFF_ONLY = """
import json, resource, sys
from compat.spark_session import spark_session
from conformance.diff import diff_captures
from conformance.model import Comparison

spark = spark_session("local[2]", app_name="diff-scale",
                      conf={"spark.driver.memory": "2g"})
result = diff_captures(spark, [sys.argv[1]], [sys.argv[2]], Comparison(),
                       left="storm", right="heron", sample_limit=5)
spark.stop()
print(json.dumps({"result": result.to_json(),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def test_five_million_rows_per_engine_diff_in_a_small_driver(tmp_path):
    left, right = tmp_path / "storm.jsonl", tmp_path / "heron.jsonl"
    size = write_synthetic(left, ROWS, engine="storm")
    write_synthetic(right, ROWS, engine="heron", reverse=True, differ_at=CHANGED)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    out = subprocess.run([sys.executable, "-c", DIFF_ONLY, str(left), str(right)], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=840)
    assert out.returncode == 0, out.stderr[-3000:]
    data = json.loads(out.stdout.strip().splitlines()[-1])
    result = data["result"]
    assert data["peak_rss_mb"] <= DRIVER_RSS_LIMIT_MB, data["peak_rss_mb"]
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
    print(f"5M rows per engine: diff {result['spark_seconds']:.0f} s, driver peak RSS "
          f"{data['peak_rss_mb']:.0f} MB")
