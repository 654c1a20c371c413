"""The word-count example on the heron engine over two containers: seeded finite counts
equal ``collections.Counter`` of the generated words, with in-process components and with
the streamparse components running as multi-lang subprocesses, and the heron engine
counts exactly what the storm engine counts."""

from __future__ import annotations

import collections
import re
import sys

import psutil
import pytest

from engine.common.submission import load_topology
from engine.storm import LocalCluster
from tests.e2e.heron.helpers import REPO, HeronRun, wait_until

EXAMPLE = REPO / "examples" / "wordcount"
pytestmark = pytest.mark.timeout(240)


def generated_counts(seed: int, n: int) -> collections.Counter:
    sys.path.insert(0, str(EXAMPLE / "src"))
    try:
        from spouts.words import generate_words
    finally:
        sys.path.remove(str(EXAMPLE / "src"))
    return collections.Counter(generate_words(seed, n))


def final_counts(result) -> dict[str, int]:
    cap = result.capture.streams[("count_bolt", "default")]
    return {key[0]: value for key, value in cap.latest.items()}


def storm_counts(seed: int, n: int, tmp_path) -> dict[str, int]:
    loaded = load_topology(EXAMPLE, name="wordcount", cli_options={
        "wordcount.seed": seed, "wordcount.max_words": n})
    with LocalCluster(loaded.compiled, log_dir=tmp_path / "storm-logs") as cluster:
        result = cluster.run(time_limit=60)
    assert result.reason == "finished"
    return final_counts(result)


def test_native_wordcount_on_heron_equals_counter_and_the_storm_engine(tmp_path, isolated_imports):
    seed, n = 11, 20_000
    run = HeronRun(EXAMPLE, "wordcount", tmp_path / "heron",
                   options={"wordcount.seed": seed, "wordcount.max_words": n},
                   workers=2, keep_all=False)
    try:
        run.start()
        assert run.placement.stmgrs == ["stmgr-1", "stmgr-2"]
        # the two counting tasks are in different containers: words cross between them
        assert len({run.placement.container_of[t]
                    for t in run.placement.tasks["count_bolt"]}) == 2
        result = run.finish(time_limit=120)
    finally:
        run.close()
    assert result.reason == "finished", (result.error, result.log_dir)
    counts = final_counts(result)
    assert counts == generated_counts(seed, n)
    assert result.capture.streams[("count_bolt", "default")].count == n
    assert (result.components["word_spout"].emitted, result.components["count_bolt"].executed) == (
        n,
        n,
    )
    assert run.alive() == []
    assert counts == storm_counts(seed, n, tmp_path)


def test_multilang_wordcount_on_heron_equals_counter(tmp_path, isolated_imports):
    """Multi-lang spouts cannot report exhaustion (Storm's protocol has no such message),
    so the run cannot end by itself: wait until the counting bolts have emitted one
    count per word, then stop it (deactivate, drain, kill) and read the outputs."""
    seed, n = 5, 2_000
    run = HeronRun(EXAMPLE, "wordcount", tmp_path / "heron",
                   options={"wordcount.seed": seed, "wordcount.max_words": n},
                   workers=2, multilang=True, keep_all=False)
    try:
        run.start(timeout=90)
        counted = wait_until(lambda: run.emitted("count_bolt") >= n, timeout=150, interval=0.5)
        assert counted, (f"count_bolt emitted {run.emitted('count_bolt')} of {n}; "
                         f"logs in {run.log_dir}")
        assert not run.runner.all_done()  # the shell spout never says it is exhausted
        result = run.finish(time_limit=0.1)
    finally:
        run.close()
    assert result.reason == "time limit", (result.error, result.log_dir)
    assert final_counts(result) == generated_counts(seed, n)
    assert result.capture.streams[("count_bolt", "default")].count == n
    assert result.components["word_spout"].emitted == n
    # the components really ran as subprocesses of the instances, and those are gone too
    launched = {}
    for path in sorted(run.log_dir.glob("container_*.log")):
        found = re.findall(r"Launched subprocess with pid (\d+)", path.read_text())
        assert found, f"{path.name} shows no multi-lang subprocess"
        launched[path.name] = [int(pid) for pid in found]
    assert len(launched) == 3
    assert run.alive() == []
    for pid in (p for pids in launched.values() for p in pids):
        assert not shell_alive(pid), f"multi-lang subprocess {pid} outlived the run"


def shell_alive(pid: int) -> bool:
    try:
        proc = psutil.Process(pid)
        return (proc.status() != psutil.STATUS_ZOMBIE
                and "compat.storm_api.run" in " ".join(proc.cmdline()))
    except psutil.Error:
        return False
