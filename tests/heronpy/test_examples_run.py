"""Heron-style example topologies (examples/topologies/, written against heronpy's API as
Heron's examples are) run unchanged with ``heron run FILE.py`` (heron engine) and from a
pex as Heron ships them (``heron run X.pex - NAME`` or ``X.pex module.Class``, storm
engine), with their known results: exact word counts, the acks and fails a spout sees,
per-stream counts, window contents, exact stateful counts, custom groupings' choices."""

from __future__ import annotations

import re
import shutil
import zipapp
from collections import Counter
from pathlib import Path

import pytest

from tests.heronpy.cli_runs import heron_run

TOPOLOGIES = Path(__file__).parent / "examples" / "topologies"
SOURCES = Path(__file__).parent / "examples" / "src"
WORDS = ["hello", "bye", "good", "bad", "heron", "storm"]
#: (engine, seconds): each example runs from its .py on the heron engine and from a pex
#: (Heron's way of shipping one) on the storm engine
ENGINES = [("storm", 4), ("heron", 8)]


def pex_of(topology: str, tmp_path: Path) -> list[str]:
    """The example as Heron ships it: a zipapp of the examples' packages and the topology
    module, whose ``__main__`` runs it; and the arguments Heron's CLI takes for it
    (``X.pex - NAME`` for a builder script, ``X.pex module.Class`` for a Topology class)."""
    root = tmp_path / f"{topology}-pex"
    shutil.copytree(SOURCES, root, ignore=shutil.ignore_patterns("__pycache__"))
    source = (TOPOLOGIES / f"{topology}.py").read_text()
    (root / f"{topology}.py").write_text(source)
    (root / "__main__.py").write_text(
        f"import runpy\nrunpy.run_module({topology!r}, run_name='__main__')\n")
    target = tmp_path / f"{topology}.pex"
    zipapp.create_archive(root, target)
    if "build_and_submit" in source:
        return [str(target), "-", topology]
    (cls,) = re.findall(r"^class (\w+)\(Topology\):", source, re.MULTILINE)
    return [str(target), f"{topology}.{cls}"]


def _run(topology: str, engine: str, seconds: float, tmp_path: Path,
         *options: str) -> tuple[dict, list[dict]]:
    """``heron run`` the example with /work/main's code (from its .py on the heron engine,
    from a pex on the storm engine); the summary and the capture."""
    target = ([str(TOPOLOGIES / f"{topology}.py")] if engine == "heron"
              else pex_of(topology, tmp_path))
    summary, records, _ = heron_run(["--engine", engine, "-t", str(seconds), *options, *target],
                                    tmp_path / f"{topology}-{engine}.jsonl", tmp_path / "logs")
    return summary, records


def _values(records: list[dict], component: str, stream: str = "default") -> list[list]:
    return [r["values"] for r in records if (r["component"], r["stream"]) == (component, stream)]


def _final_counts(records: list[dict], component: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word, count in _values(records, component):
        counts[word] = max(counts.get(word, 0), count)
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("engine, seconds", ENGINES)
def test_word_count_is_exact_and_every_tuple_tree_is_acked_with_the_reused_id(
        engine, seconds, tmp_path):
    summary, records = _run("word_count_topology", engine, seconds, tmp_path)
    # two spout tasks, 50 rounds each; every emit carried tup_id 'message id'
    assert _final_counts(records, "count_bolt") == {w: 100 for w in WORDS}
    assert Counter(map(tuple, _values(records, "word_spout", "ackfail"))) == {
        ("ack", "message id"): 600}
    assert summary["components"]["word_spout"]["tasks"] == 2


@pytest.mark.slow
@pytest.mark.parametrize("engine, seconds", ENGINES)
def test_half_acking_spout_sees_exactly_half_acks_and_half_fails(engine, seconds, tmp_path):
    _, records = _run("half_acking_topology", engine, seconds, tmp_path)
    assert Counter(kind for kind, _ in _values(records, "word_spout", "ackfail")) == {
        "ack": 150, "fail": 150}


@pytest.mark.slow
@pytest.mark.parametrize("engine, seconds", ENGINES)
def test_multi_stream_counts_each_stream_and_all_grouping_reaches_the_aggregator(
        engine, seconds, tmp_path):
    _, records = _run("multi_stream_topology", engine, seconds, tmp_path)
    assert _final_counts(records, "count_bolt") == {w: 100 for w in WORDS}
    assert _final_counts(records, "stream_aggregator") == {"default": 600, "error": 60}


@pytest.mark.slow
@pytest.mark.parametrize("engine, seconds", ENGINES)
def test_window_bolts_close_windows_on_the_tick_they_set_in_initialize(engine, seconds,
                                                                       tmp_path):
    summary, records = _run("window_size_topology", engine, seconds, tmp_path)
    sliding = [size for (size,) in _values(records, "sliding_bolt")]
    tumbling = [size for (size,) in _values(records, "tumbling_bolt")]
    assert len(sliding) >= 2 and len(tumbling) >= 2, (sliding, tumbling)
    assert max(sliding) > 0 and max(tumbling) > 0
    # a tumbling window holds each tuple once; its windows are acked when they close
    assert sum(tumbling) <= summary["components"]["word_spout"]["emitted"]
    assert summary["components"]["tumbling_bolt"]["acked"] == sum(tumbling)


@pytest.mark.slow
@pytest.mark.parametrize("engine, seconds", ENGINES)
def test_stateful_word_count_is_exact_under_effectively_once(engine, seconds, tmp_path):
    summary, records = _run("stateful_word_count_topology", engine, seconds, tmp_path)
    assert _final_counts(records, "count_bolt") == {w: 40 for w in WORDS}
    assert summary["checkpoints"] is None or summary["checkpoints"]


@pytest.mark.slow
def test_at_most_once_acks_an_emit_with_an_id_at_once(tmp_path):
    _, records = _run("word_count_topology", "storm", 4, tmp_path,
                      "-o", "topology.reliability.mode=ATMOST_ONCE")
    assert Counter(kind for kind, _ in _values(records, "word_spout", "ackfail")) == {"ack": 600}


@pytest.mark.slow
def test_user_metrics_and_task_hooks_reach_the_engines_metrics(isolated_imports, tmp_path):
    from engine.common.submission import load_topology
    from engine.storm.cluster import LocalCluster

    loaded = load_topology(TOPOLOGIES / "word_count_topology.py",
                           cli_options={"heron.metrics.export.interval.sec": 1})
    cluster = LocalCluster(loaded.compiled, log_dir=tmp_path)
    cluster.run(time_limit=3)
    bolts = [m for (comp, _), m in cluster.metrics.items() if comp == "count_bolt"]
    spouts = [m for (comp, _), m in cluster.metrics.items() if comp == "word_spout"]
    assert len(bolts) == 2 and all("words" in m and "word-length" in m for m in bolts)
    assert sum(m["hook/bolt_execute"] for m in bolts) == 600
    assert sum(m["hook/bolt_ack"] for m in bolts) == 600
    assert sum(m["hook/spout_ack"] for m in spouts) == 600
    assert all(m["hook/prepare"] == 1 for m in bolts + spouts)
    assert any("__auto__/count" in m for m in bolts + spouts)


@pytest.mark.slow
@pytest.mark.parametrize("engine, seconds", ENGINES)
def test_custom_groupings_choose_the_tasks_in_the_emitting_task(engine, seconds, tmp_path):
    """Heron's example (every word to the lowest task; from its pex, on one engine to
    keep the suite short), and an object and a class-path grouping whose choices the
    bolts' tasks report, on both."""
    if engine == "storm":
        summary, records = _run("custom_grouping_topology", engine, seconds, tmp_path)
        bolt = summary["components"]["consume_bolt"]
        assert (bolt["acked"], bolt["failed"]) == (150, 150)
        # heronpy's default is at-most-once: the spout sees every id acked at once
        assert Counter(kind for kind, _ in _values(records, "word_spout", "ackfail")) == {
            "ack": 300}

    _, records = _run("custom_grouping_choices_topology", engine, seconds, tmp_path)
    by_length = Counter(map(tuple, _values(records, "by_length")))
    assert by_length == {(len(w) % 3, w): 50 for w in WORDS}
    long_words = Counter(map(tuple, _values(records, "long_words")))
    assert long_words == {(i, w): 50 for w in WORDS for i in (range(3) if len(w) > 4 else [0])}
