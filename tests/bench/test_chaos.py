"""The chaos soak (bench/chaos.py): its parts on their own, and a 3-minute soak with a kill
every 3-8 s, in which every kind of engine process is killed at least once (each kind
once first, then at random), no id of the corpus prefix the spouts emitted is lost, and
the summary and the chart are produced. Every process of the run is stopped whatever
happens (the topology's processes are found by their command lines, which name the
run's working dir)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from bench.chaos_monkey import KINDS, Kill, Ledger, Monkey, kind_of, leftovers
from bench.chaos_report import percentile, recovery_figures

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "chaos.py"
sys.path.insert(0, str(REPO / "bench" / "projects" / "chaos_wordcount" / "src"))
from chaos_parts import sentence, sentence_id, split_id  # noqa: E402


def test_pid_file_names_map_to_kinds():
    assert kind_of("scheduler") == "scheduler"
    assert kind_of("scheduler-service") == "scheduler service"
    assert kind_of("executor-0") == "executor"
    assert kind_of("heron-tmanager") == "topology master"
    assert kind_of("heron-healthmgr") == "health manager"
    assert kind_of("stmgr-2") == "stream manager"
    assert kind_of("metricsmgr-1") == "metrics manager"
    assert kind_of("container_1_sentences_1") == "spout instance"
    assert kind_of("container_2_split_6") == "bolt instance"
    assert kind_of("container_12_sink_14") == "bolt instance"


class _Proc:
    def __init__(self, pid):
        self.pid = pid


def test_the_monkey_hits_every_kind_first_and_waits_for_a_kind_being_restarted():
    monkey = Monkey(random.Random(3), KINDS, (3, 8))
    live = {
        "scheduler": _Proc(1),
        "scheduler-service": _Proc(9),
        "executor-1": _Proc(2),
        "heron-tmanager": _Proc(3),
        "heron-healthmgr": _Proc(4),
        "stmgr-1": _Proc(5),
        "metricsmgr-1": _Proc(6),
        "container_1_sentences_1": _Proc(7),
        "container_1_split_3": _Proc(8),
    }
    first = monkey.first_round[0]
    without = {n: p for n, p in live.items() if kind_of(n) != first}
    assert monkey.pick(without) is None  # its turn stays until one of it is live
    picked = [monkey.pick(live)[0] for _ in KINDS]
    assert picked[0] == first and sorted(picked) == sorted(KINDS)
    assert monkey.pick(live)[0] in KINDS


def test_the_corpus_is_deterministic_and_ids_split_back():
    assert sentence(7, 1, 42) == sentence(7, 1, 42) != sentence(8, 1, 42)
    assert 3 <= len(sentence(7, 0, 5).split()) <= 8
    assert split_id(sentence_id(1, 1234, 2), 2) == (1, 1234)


def test_the_ledger_counts_distinct_ids_duplicates_and_torn_lines(tmp_path):
    (tmp_path / "sink-3.log").write_bytes(b"0 4\n2 5\nd 2\n7\n4 3\n")
    (tmp_path / "sink-4.log").write_bytes(b"1 4\n2 5\n3 ")
    ledger = Ledger(tmp_path, lambda gid, words: words != 3)
    assert ledger.poll() == 4  # 0, 2, 4, 1
    assert (ledger.duplicates, ledger.missed_dups, ledger.torn, ledger.wrong) == (1, 1, 1, 1)
    with open(tmp_path / "sink-4.log", "ab") as fh:
        fh.write(b"6\n")  # the line being written when read
    assert ledger.poll() == 1 and ledger.has(3) and not ledger.has(5)


def test_recovery_percentiles_per_kind():
    kills = [Kill(0, "stream manager", "stmgr-1", 1, back_s=1.0, recovered_s=float(s))
             for s in (1, 2, 3, 4)] + [Kill(0, "scheduler", "scheduler", 2)]
    figures = recovery_figures(kills)
    assert figures["stream manager"]["p50_s"] == 2 and figures["stream manager"]["max_s"] == 4
    assert figures["scheduler"] == {**figures["scheduler"], "kills": 1, "recovered": 0}
    assert figures["all"]["kills"] == 5 and percentile([5.0], 99) == 5.0


@pytest.mark.slow
@pytest.mark.timeout(330)
def test_a_three_minute_soak_loses_nothing_and_hits_every_kind(tmp_path):
    home, chart, report = tmp_path / "home", tmp_path / "chaos.png", tmp_path / "chaos.json"
    needle = str(home / "topologies")
    try:
        proc = subprocess.run(
            [sys.executable, str(SCRIPT), "--minutes", "3", "--interval", "3-8", "--seed", "1",
             "--work-dir", str(home), "--chart", str(chart), "--json-file", str(report)],
            capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False,
            env={**os.environ, "COLUMNS": "160"})
    finally:
        left = leftovers(needle)
        for p in left:
            try:
                p.kill()
            except psutil.Error:
                pass
    output = proc.stdout + proc.stderr
    assert left == [], f"processes left: {left}\n{output}"
    figures = json.loads(report.read_text())
    ids = figures["ids"]
    assert figures["drained"], output
    assert ids["emitted"] > 10_000 and ids["acked"] == ids["emitted"], ids
    assert ids["lost"] == 0, (ids["lost_sample"], output)
    assert ids["recorded"] == ids["emitted"] and ids["wrong_word_counts"] == 0, ids
    assert ids["words_counted"] == ids["words_expected"], ids
    assert set(figures["killed_kinds"]) == set(KINDS), (figures["killed_kinds"], output)
    assert figures["every_kind_killed"], figures["killed_kinds"]
    for kind in KINDS:
        assert figures["recovery"][kind]["kills"] >= 1, kind
    assert set(figures["resources"]) >= set(KINDS) - {"scheduler"}, figures["resources"]
    # the summary and the chart
    flat = " ".join(proc.stdout.split())
    for text in ("ids (every spout partition's corpus prefix)", "recovery after kill -9",
                 "RSS (MB) and open fds, first vs last third", "min of chaos:",
                 f"chart: {chart}"):
        assert text in flat, (text, output)
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"\n{proc.stdout}")
    if figures["ok"]:
        assert proc.returncode == 0, output
