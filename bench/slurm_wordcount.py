"""Word count on a three-node Slurm cluster next to the same topology on `local`, and the
time a topology takes to process again after a node dies.

    python bench/slurm_wordcount.py [--words N] [--kills K] [--json]

Needs root, network namespaces and Debian's Slurm packages (``bash scripts/test.sh``
installs them): it builds the same cluster the tests use (tests/slurm/: three
``slurmd`` in their own network namespaces on a bridge, a ZooKeeper on the bridge), so
every tuple between containers crosses a real network stack, encrypted with CurveZMQ.

1. **Throughput**: examples/wordcount (fields grouping, two counting tasks, three
   containers, at-most-once, ``--words`` words) submitted with ``heron submit local`` and
   with ``heron submit slurm``; words/s from the first to the last counted word, read
   from the Topology Master's execute counts.
2. **Recovery**: the durable at-least-once topology of tests/cluster/projects/durable at
   a steady rate; ``--kills`` times, the node running a counting container is killed
   (every process in its namespace, slurmd included), and the benchmark reports each
   phase: from the container's last report until the scheduler noticed (its silence, or
   Slurm marking the node not responding), until its new job ran on another node, until
   the new container reported, and from the kill until acks flowed again; the node is
   then returned to service. Every id must be acked in the end. ``--skip-throughput``
   measures only this.

The machine has 2 cores shared by every node, so the figures compare the two schedulers
on one machine; they are not a cluster's capacity.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from click.testing import CliRunner  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.live import Live  # noqa: E402
from rich.table import Table  # noqa: E402
from rich.text import Text  # noqa: E402

from engine.tools.cli.main import main as heron_main  # noqa: E402
from tests.slurm import SlurmCluster, missing_requirements  # noqa: E402
from tests.zookeeper_server import ZooKeeperServer  # noqa: E402

WORDCOUNT = ROOT / "examples" / "wordcount"
DURABLE = ROOT / "tests" / "cluster" / "projects" / "durable"
SMALL = ["-o", "heron.resources.instance.ram=134217728", "-o", "heron.resources.instance.cpu=0.5",
         "-o", "topology.container.padding.ram=268435456",
         "-o", "topology.container.padding.cpu=1.0"]


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(heron_main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def write_cluster(home: Path, cluster, zk_hosts: str, tmp: Path) -> None:
    conf = home / "conf" / "slurm"
    conf.mkdir(parents=True)
    digest = tmp / "zk-auth"
    digest.write_text("heron:bench\n")
    digest.chmod(0o600)
    (conf / "scheduler.yaml").write_text(
        f"heron.class.scheduler: slurm\nheron.slurm.conf: {cluster.conf_path}\n"
        f"heron.slurm.poll.secs: 1\nheron.slurm.work.root: {cluster.local_dir}\n"
        f"heron.slurm.python: {sys.executable}\n")
    (conf / "statemgr.yaml").write_text(
        f"heron.class.state.manager: zookeeper\nheron.statemgr.connection.string: {zk_hosts}\n"
        f"heron.statemgr.root.path: /bench-{uuid.uuid4().hex[:8]}\n"
        f"heron.statemgr.zookeeper.auth.file: {digest}\n")
    (conf / "uploader.yaml").write_text(
        f"heron.class.uploader: localfs\n"
        f"heron.uploader.localfs.file.system.directory: {cluster.shared_dir / 'packages'}\n")


def counted(home: Path, name: str, cluster_args: list[str]) -> tuple[int, float]:
    """(words counted so far, time) from the Topology Master's metrics."""
    code, out = cli("metrics", name, "--json", "--home", str(home), *cluster_args)
    if code != 0:
        return 0, time.monotonic()
    data = json.loads(out)
    return (sum(int(v.get("__execute-count", 0)) for k, v in data.items()
                if k.startswith("count_bolt/")), time.monotonic())


def throughput(home: Path, scheduler: str, words: int, status) -> dict:
    cluster_args = ["--cluster", "slurm"] if scheduler == "slurm" else []
    name = "wordcount"
    code, out = cli("submit", scheduler, str(WORDCOUNT), "-w", "3", "--home", str(home),
                    "-o", f"wordcount.max_words={words}", "-o", "wordcount.seed=7",
                    "-o", "topology.acker.executors=0", *SMALL)
    if code != 0:
        raise SystemExit(f"submit {scheduler} failed: {out}")
    first = last = None
    seen = 0
    deadline = time.monotonic() + 120 + words / 5000
    try:
        while time.monotonic() < deadline and seen < words:
            seen, at = counted(home, name, cluster_args)
            if seen and first is None:
                first = (seen, at)
            if seen:
                last = (seen, at)
            status(f"{scheduler}: {seen:,} of {words:,} words counted")
            time.sleep(0.25)
    finally:
        cli("kill", name, "--wait", "0", "--home", str(home), *cluster_args)
    if first is None or seen < words or last[1] <= first[1] or first[0] >= words:
        # never seen mid-way (too few words to sample): no rate rather than a wrong one
        return {"scheduler": scheduler, "words": words, "counted": seen, "words_per_s": None}
    window = last[1] - first[1]
    return {"scheduler": scheduler, "words": words, "counted": seen,
            "words_per_s": (last[0] - first[0]) / window}


def recovery(home: Path, cluster, kills: int, status) -> list[dict]:
    sys.path.insert(0, str(ROOT))
    # deferred: a pytest test module (pytest is the test extra), needed only for recovery
    from tests.cluster.test_slurm_topology import SlurmTopology, container_of, job_of

    out = []
    for k in range(kills):
        tmp = Path(tempfile.mkdtemp(prefix="bench-kill-"))
        topology = SlurmTopology(cluster, ZK[0], tmp, n=4000, rate=150)
        topology.submit(workers=3)
        node = None
        try:
            started = time.monotonic()
            while len(topology.acked()) < 300:
                if time.monotonic() - started > 180:
                    raise SystemExit(f"kill {k + 1}: the topology never got going: "
                                     f"{topology.status()}")
                status(f"kill {k + 1}/{kills}: waiting for traffic ({len(topology.acked())} acked)")
                time.sleep(0.5)
            container = container_of(topology, "sink")
            node = job_of(topology, container)["node"]
            before = len(topology.acked())
            killed = time.monotonic()
            cluster.kill_node(node)
            moved_at = flowing_at = None
            stalled = before
            while time.monotonic() - killed < 240 and (moved_at is None or flowing_at is None):
                job = job_of(topology, container)
                if (
                    moved_at is None
                    and job
                    and job["state"] == "RUNNING"
                    and job["node"] not in ("", node)
                ):
                    moved_at = time.monotonic()
                acked = len(topology.acked())
                if moved_at is not None and flowing_at is None and acked > stalled + 50:
                    flowing_at = time.monotonic()
                if moved_at is None:
                    stalled = acked
                status(f"kill {k + 1}/{kills}: {node} dead {time.monotonic() - killed:.0f} s")
                time.sleep(0.2)
            while len(topology.acked()) < topology.n and time.monotonic() - killed < 400:
                status(f"kill {k + 1}/{kills}: draining ({len(topology.acked())} of {topology.n})")
                time.sleep(0.5)
            # the scheduler's own phases, timed from the container's last report
            phases = next((r for r in topology.status().get("recoveries", [])
                           if r["container"] == container), {})
            out.append({"kill": k + 1, "node": node, "container": container,
                        "noticed_s": phases.get("detected_after"),
                        "job_running_s": phases.get("running_after"),
                        "reporting_again_s": phases.get("seconds"),
                        "container_running_elsewhere_s": None if moved_at is None
                        else round(moved_at - killed, 1),
                        "processing_again_s": None if flowing_at is None
                        else round(flowing_at - killed, 1),
                        "every_id_acked": topology.acked() == set(range(topology.n))})
        finally:
            topology.kill()
            if node is not None:
                cluster.return_to_service(node)
            shutil.rmtree(tmp, ignore_errors=True)
    return out


ZK: list = []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true",
                        help="Measure only the recovery from node deaths.")
    args = parser.parse_args(argv)
    # a SIGTERM (a time limit, a CI job cancelled) unwinds like Ctrl-C: every `finally`
    # below kills its topology and stops the cluster, leaving no scheduler service behind
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    why = missing_requirements()
    if why:
        print(f"cannot build a Slurm cluster here: {why}", file=sys.stderr)
        return 2
    console = Console(stderr=args.json)
    line = Text("starting a three-node Slurm cluster")
    report: dict = {}
    with Live(line, console=console, refresh_per_second=4, transient=True):
        def status(text: str) -> None:
            line.plain = text

        cluster = SlurmCluster(nodes=3).start()
        zk = ZooKeeperServer(host=cluster.host_address)
        zk.start()
        ZK[:] = [zk]
        tmp = Path(tempfile.mkdtemp(prefix="bench-slurm-"))
        try:
            home = tmp / "home"
            write_cluster(home, cluster, zk.hosts, tmp)
            report["throughput"] = [] if args.skip_throughput else [
                throughput(home, "local", args.words, status),
                throughput(home, "slurm", args.words, status)]
            report["recovery"] = recovery(home, cluster, args.kills, status)
        finally:
            zk.stop()
            cluster.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    table = Table(title="word count, 3 containers (at-most-once)", title_justify="left")
    for column in ("scheduler", "words", "words/s"):
        table.add_column(column, justify="right")
    for row in report["throughput"]:
        rate = row["words_per_s"]
        table.add_row(row["scheduler"], f"{row['counted']:,}/{row['words']:,}",
                      "-" if rate is None else f"{rate:,.0f}")
    if report["throughput"]:
        console.print(table)
    kills = Table(title="node death: a counting container's node killed", title_justify="left")
    for column in ("kill", "node", "container", "noticed s", "new job running s",
                   "reporting again s", "acks flowing s (from the kill)", "every id acked"):
        kills.add_column(column, justify="right")
    for row in report["recovery"]:
        kills.add_row(str(row["kill"]), row["node"], str(row["container"]),
                      str(row["noticed_s"]), str(row["job_running_s"]),
                      str(row["reporting_again_s"]), str(row["processing_again_s"]),
                      "yes" if row["every_id_acked"] else "NO")
    console.print(kills)
    times = [r["processing_again_s"] for r in report["recovery"] if r["processing_again_s"]]
    if times:
        console.print(
            f"processing again after a node death: median {statistics.median(times):.1f} s "
            f"over {len(times)} kills (min {min(times):.1f}, max {max(times):.1f})"
        )
    console.print("phases are timed from the container's last report to the Topology Master "
                  "(about when the node died): noticed by the scheduler, its new job running "
                  "on another node, the new container reporting; acks flowing is timed from "
                  "the kill")
    ok = all(r["every_id_acked"] for r in report["recovery"]) and all(
        r["words_per_s"] is not None for r in report["throughput"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
