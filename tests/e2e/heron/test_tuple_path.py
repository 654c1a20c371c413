"""Every process of a heron run says in its first log line which tuple path it runs, and
runs the one asked for: ``HERON_PURE_PYTHON=1`` gives the pure-Python path in every
process the engine starts, the default the compiled one (where it is built); both count
the words exactly."""

from __future__ import annotations

import collections
import os
import sys

import pytest

from engine.common.codec.selection import REQUIRE_ENV, TuplePathError, select
from tests.e2e.heron.helpers import REPO, HeronRun

EXAMPLE = REPO / "examples" / "wordcount"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def generated_counts(seed: int, n: int) -> collections.Counter:
    sys.path.insert(0, str(EXAMPLE / "src"))
    try:
        from spouts.words import generate_words
    finally:
        sys.path.remove(str(EXAMPLE / "src"))
    return collections.Counter(generate_words(seed, n))


def require_compiled() -> None:
    """As tests/engine/codec: skip without a build, fail under HERON_REQUIRE_COMPILED."""
    try:
        select({REQUIRE_ENV: "1"})
    except TuplePathError as exc:
        if os.environ.get(REQUIRE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
            pytest.fail(f"{REQUIRE_ENV}=1: {exc}")
        pytest.skip(f"no usable compiled tuple path here: {exc}")


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure-python"])
def test_each_process_runs_and_logs_the_tuple_path_asked_for(
        pure: bool, tmp_path, isolated_imports, monkeypatch: pytest.MonkeyPatch) -> None:
    if pure:
        monkeypatch.setenv("HERON_PURE_PYTHON", "1")
        expected = "tuple path: pure Python (HERON_PURE_PYTHON=1)"
    else:
        require_compiled()
        monkeypatch.delenv("HERON_PURE_PYTHON", raising=False)
        expected = "tuple path: compiled (engine.common.codec._codec"
    seed, n = 5, 5_000
    run = HeronRun(EXAMPLE, "wordcount", tmp_path / "heron",
                   options={"wordcount.seed": seed, "wordcount.max_words": n},
                   workers=2, keep_all=False)
    try:
        run.start()
        result = run.finish(time_limit=120)
    finally:
        run.close()
    assert result.reason == "finished", (result.error, result.log_dir)
    cap = result.capture.streams[("count_bolt", "default")]
    assert {key[0]: value for key, value in cap.latest.items()} == generated_counts(seed, n)
    logs = sorted(run.log_dir.glob("*.log"))
    # executors, Stream Managers, Metrics Managers, the Topology Master and instances
    for kind in ("executor-", "stmgr-", "metricsmgr-", "tmanager", "container_"):
        assert any(kind in path.name for path in logs), (kind, [p.name for p in logs])
    for path in logs:
        first = path.read_text().splitlines()[0]
        assert "heron.fastpath: " + expected in first, (path.name, first)


def test_a_mixed_run_pure_python_instances_and_compiled_stream_managers_counts_exactly(
        tmp_path, isolated_imports, monkeypatch: pytest.MonkeyPatch) -> None:
    """``HERON_PURE_PYTHON_KINDS=instance``: the instances encode and decode batches in
    pure Python, the Stream Managers (and every other process) run compiled, and the
    words are still counted exactly: the batch wire format is the same on both paths."""
    require_compiled()
    monkeypatch.delenv("HERON_PURE_PYTHON", raising=False)
    monkeypatch.setenv("HERON_PURE_PYTHON_KINDS", "instance")
    seed, n = 11, 5_000
    run = HeronRun(EXAMPLE, "wordcount", tmp_path / "heron",
                   options={"wordcount.seed": seed, "wordcount.max_words": n},
                   workers=2, keep_all=False)
    try:
        run.start()
        result = run.finish(time_limit=120)
    finally:
        run.close()
    assert result.reason == "finished", (result.error, result.log_dir)
    cap = result.capture.streams[("count_bolt", "default")]
    assert {key[0]: value for key, value in cap.latest.items()} == generated_counts(seed, n)
    firsts = {path.stem: path.read_text().splitlines()[0]
              for path in sorted(run.log_dir.glob("*.log"))}
    instances = [name for name in firsts if name.startswith("container_")]
    stmgrs = [name for name in firsts if name.startswith("stmgr-")]
    assert len(instances) >= 3 and len(stmgrs) == 2, sorted(firsts)
    for name, first in firsts.items():
        expected = ("tuple path: pure Python (HERON_PURE_PYTHON=1)" if name in instances
                    else "tuple path: compiled (engine.common.codec._codec")
        assert "heron.fastpath: " + expected in first, (name, first)
