"""The conformance diff at scale: wall time and the Python driver's peak RSS.

Writes two synthetic captures of N rows per engine (``conformance.synthetic``: distinct
rows, the second in reverse order with one row changed), each a capture directory with
one file per task as an engine run writes it (``--tasks``, 4 by default), then diffs them
in a fresh subprocess that does nothing else, so its ``ru_maxrss`` is the driver's peak.
The diff must find exactly the changed row (divergent, one missing, one novel) or the run
fails.

    python bench/conformance_diff.py                       # 1M and 5M rows on local[2]
    python bench/conformance_diff.py --with-20m --cluster  # also 20M rows (~2.9 GB a side)
    python bench/conformance_diff.py --rows 1M,5M,20M      # the same, by hand
    python bench/conformance_diff.py --path old --old-rev fd9be09   # the in-driver differ

Row counts take ``k``/``M`` suffixes. Before writing, the bench checks the work
directory's free space for both captures of the largest count (about 145 bytes a row a
side) and stops with the figure needed rather than filling the disk midway; each count's
captures are removed once measured.

``--path old`` runs the differ as it was before the diff moved into Spark (the tree of
``--old-rev``, extracted with ``git archive`` into a temporary directory): every record
read into the driver, canonicalised and counted there, the counts handed to Spark; it
reads one file per side (the old reader knows no directories).
``--cluster`` starts a standalone master and two workers
(:mod:`conformance.spark_cluster`) and diffs there as well. ``--json`` prints the
figures as JSON. The driver runs with ``spark.driver.memory=2g``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: bytes a synthetic capture line takes (145 at 1M rows; the keys grow no longer)
BYTES_PER_ROW = 150
_SUFFIXES = {"k": 10**3, "m": 10**6}


def parse_rows(text: str) -> list[int]:
    """``"1M,5M,20000000"`` as row counts; a clear error for anything else."""
    counts = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        scale = _SUFFIXES.get(part[-1].lower(), 1)
        number = part[:-1] if scale > 1 else part
        try:
            value = int(float(number) * scale) if scale > 1 else int(number)
        except ValueError:
            raise SystemExit(f"--rows: {part!r} is not a row count (e.g. 1000000, 5M)") from None
        if value < 1:
            raise SystemExit(f"--rows: {part!r} must be at least 1")
        counts.append(value)
    if not counts:
        raise SystemExit("--rows: no row counts given")
    return counts


def check_space(work: Path, rows: int) -> None:
    """Stop, saying how much is needed, when ``work`` cannot hold both captures of
    ``rows`` rows (with 10% to spare)."""
    needed = int(2 * rows * BYTES_PER_ROW * 1.1)
    free = shutil.disk_usage(work).free
    if free < needed:
        raise SystemExit(f"{work}: {free / 2**30:.1f} GiB free, the captures of {rows:,} "
                         f"rows per engine need about {needed / 2**30:.1f} GiB; choose "
                         "another --work-dir or fewer --rows")


def _worker(args: argparse.Namespace) -> None:
    """Run one diff and print ``{"seconds", "peak_rss_mb", ...}`` as JSON."""
    if args.path == "old":
        sys.path.insert(0, args.old_tree)
    sys.path.insert(1, str(REPO))
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # deferred: after the sys.path set-up above (--path old: conformance from --old-tree)
    from compat.spark_session import spark_session
    from conformance.model import Comparison

    spark = spark_session(args.master, app_name="bench-conformance-diff",
                          conf={"spark.driver.memory": "2g"})
    began = time.monotonic()
    if args.path == "old":
        # deferred: the old differ, from the --old-tree put first on sys.path above
        from conformance.capture import read_capture
        from conformance.diff import diff_outputs

        left = list(read_capture(Path(args.left)))
        right = list(read_capture(Path(args.right)))
        result = diff_outputs(spark, left, right, Comparison(), left="storm", right="heron")
    else:
        # deferred: the new differ, from the repo put on sys.path above
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
    parser.add_argument("--rows", default="1M,5M",
                        help="row counts per engine, comma-separated (k/M suffixes)")
    parser.add_argument("--with-20m", action="store_true",
                        help="add the 20,000,000-row figure (~2.9 GB per engine, minutes)")
    parser.add_argument("--tasks", type=int, default=4,
                        help="capture files per engine (one per task, as engines write)")
    parser.add_argument("--path", choices=["new", "old"], default="new")
    parser.add_argument("--old-rev", default="HEAD", help="git revision of the old differ")
    parser.add_argument("--cluster", action="store_true",
                        help="also diff on a standalone cluster (master + two workers)")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    counts = parse_rows(args.rows)
    if args.with_20m and 20_000_000 not in counts:
        counts.append(20_000_000)
    if args.tasks < 1:
        raise SystemExit("--tasks must be at least 1")
    results = []
    if args.work_dir is not None:
        args.work_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-diff-", dir=args.work_dir) as tmp:
        work = Path(tmp)
        check_space(work, max(counts))
        old_tree = None
        if args.path == "old":
            (Path(tmp) / "old").mkdir()
            old_tree = _old_tree(args.old_rev, Path(tmp) / "old")
        cluster = None
        masters = ["local[2]"]
        if args.cluster:
            # deferred: this script imports no project module at module level (see _worker)
            from conformance.spark_cluster import StandaloneCluster

            cluster = StandaloneCluster(Path(tmp) / "cluster", workers=2)
            cluster.start()
            masters.append(cluster.master_url)
        try:
            # deferred: this script imports no project module at module level (see _worker)
            from conformance.synthetic import write_synthetic, write_synthetic_tasks

            for rows in counts:
                if args.path == "old":  # one file a side: the old reader's input
                    left, right = work / f"left-{rows}.jsonl", work / f"right-{rows}.jsonl"
                    size = write_synthetic(left, rows, engine="storm")
                    write_synthetic(right, rows, engine="heron", reverse=True,
                                    differ_at=rows // 2)
                else:  # capture directories, a file per task
                    left, right = work / f"left-{rows}", work / f"right-{rows}"
                    size = write_synthetic_tasks(left, rows, tasks=args.tasks,
                                                 engine="storm")
                    write_synthetic_tasks(right, rows, tasks=args.tasks, engine="heron",
                                          reverse=True, differ_at=rows // 2)
                for master in masters:
                    figures = _measure(args.path, master, left, right, old_tree,
                                       args.timeout)
                    figures.update(rows=rows, master="standalone" if master.startswith(
                        "spark://") else master, path=args.path,
                        capture_mb=round(size / 2**20),
                        files=1 if args.path == "old" else args.tasks)
                    results.append(figures)
                    if not args.json:
                        print(json.dumps(figures), flush=True)
                for side in (left, right):
                    if side.is_dir():
                        shutil.rmtree(side)
                    else:
                        side.unlink()
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
