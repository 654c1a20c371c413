"""The conformance diff at scale: wall time and the Python driver's peak RSS.

Writes two synthetic captures of N rows per engine (``conformance.synthetic``: distinct
rows, the second in reverse order with one row changed), then diffs them in a fresh
subprocess that does nothing else, so its ``ru_maxrss`` is the driver's peak. The diff
must find exactly the changed row (divergent, one missing, one novel) or the run fails.

    python bench/conformance_diff.py                       # 1M and 5M rows on local[2]
    python bench/conformance_diff.py --rows 1000000,5000000,20000000 --cluster
    python bench/conformance_diff.py --path old --old-rev fd9be09   # the in-driver differ

``--path old`` runs the differ as it was before the diff moved into Spark (the tree of
``--old-rev``, extracted with ``git archive`` into a temporary directory): every record
read into the driver, canonicalised and counted there, the counts handed to Spark.
``--cluster`` starts a standalone master and two workers
(:mod:`conformance.spark_cluster`) and diffs there as well. ``--json`` prints the
figures as JSON. The driver runs with ``spark.driver.memory=2g``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _worker(args: argparse.Namespace) -> None:
    """Run one diff and print ``{"seconds", "peak_rss_mb", ...}`` as JSON."""
    if args.path == "old":
        sys.path.insert(0, args.old_tree)
    sys.path.insert(1, str(REPO))
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from compat.spark_session import spark_session
    from conformance.model import Comparison

    spark = spark_session(args.master, app_name="bench-conformance-diff",
                          conf={"spark.driver.memory": "2g"})
    began = time.monotonic()
    if args.path == "old":
        from conformance.capture import read_capture
        from conformance.diff import diff_outputs

        left = list(read_capture(Path(args.left)))
        right = list(read_capture(Path(args.right)))
        result = diff_outputs(spark, left, right, Comparison(), left="storm", right="heron")
    else:
        from conformance.diff import diff_captures

        result = diff_captures(spark, [args.left], [args.right], Comparison(),
                               left="storm", right="heron")
    seconds = time.monotonic() - began
    spark.stop()
    print(json.dumps({"seconds": round(seconds, 1),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                           / 1024),
                      "observed": result.observed.value,
                      "missing": result.counts.missing,
                      "novel": result.counts.novel_extras,
                      "rows_left": result.counts.rows_left}))


def _measure(path: str, master: str, left: Path, right: Path, old_tree: str | None,
             timeout: float) -> dict:
    cmd = [sys.executable, __file__, "_worker", "--path", path, "--master", master,
           "--left", str(left), "--right", str(right)]
    if old_tree:
        cmd += ["--old-tree", old_tree]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:]}
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    ok = (figures["observed"] == "divergent" and figures["missing"] == 1
          and figures["novel"] == 1)
    figures["found_the_difference"] = ok
    return figures


def _old_tree(rev: str, into: Path) -> str:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "conformance"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return str(into)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="1000000,5000000")
    parser.add_argument("--path", choices=["new", "old"], default="new")
    parser.add_argument("--old-rev", default="HEAD", help="git revision of the old differ")
    parser.add_argument("--cluster", action="store_true",
                        help="also diff on a standalone cluster (master + two workers)")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-diff-") as tmp:
        work = args.work_dir or Path(tmp)
        old_tree = None
        if args.path == "old":
            (Path(tmp) / "old").mkdir()
            old_tree = _old_tree(args.old_rev, Path(tmp) / "old")
        cluster = None
        masters = ["local[2]"]
        if args.cluster:
            from conformance.spark_cluster import StandaloneCluster

            cluster = StandaloneCluster(Path(tmp) / "cluster", workers=2)
            cluster.start()
            masters.append(cluster.master_url)
        try:
            for rows in (int(r) for r in args.rows.split(",")):
                left, right = work / f"left-{rows}.jsonl", work / f"right-{rows}.jsonl"
                from conformance.synthetic import write_synthetic

                size = write_synthetic(left, rows, engine="storm")
                write_synthetic(right, rows, engine="heron", reverse=True,
                                differ_at=rows // 2)
                for master in masters:
                    figures = _measure(args.path, master, left, right, old_tree,
                                       args.timeout)
                    figures.update(rows=rows, master="standalone" if master.startswith(
                        "spark://") else master, path=args.path,
                        capture_mb=round(size / 2**20))
                    results.append(figures)
                    if not args.json:
                        print(json.dumps(figures), flush=True)
                left.unlink()
                right.unlink()
        finally:
            if cluster is not None:
                cluster.stop()
    if args.json:
        print(json.dumps(results, indent=2))
    return 0 if all(r.get("found_the_difference") for r in results) else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_worker":
        p = argparse.ArgumentParser()
        p.add_argument("_worker")
        p.add_argument("--path", default="new")
        p.add_argument("--master", default="local[2]")
        p.add_argument("--left")
        p.add_argument("--right")
        p.add_argument("--old-tree")
        _worker(p.parse_args())
        sys.exit(0)
    sys.exit(main())
