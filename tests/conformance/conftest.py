"""Fixtures of the conformance tests: stand-in adapters that write chosen captures, and
small user projects written on the fly.

Diffs run on the session-wide ``spark`` fixture (tests/conftest.py); nothing here starts
or stops a SparkSession.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from conformance.capture import CaptureWriter
from conformance.catalogue import CAPABILITIES, Case, Kill
from conformance.engines import EngineAdapter, EngineOutput


class ScriptedAdapter(EngineAdapter):
    """An engine that "runs" a case by writing the rows a test chose for it (one file in
    its capture directory, as if it had one task).

    ``rows(case) -> [(component, stream, values)]``; ``reason`` other than "finished"
    makes a run that ended badly. Every call is recorded in ``calls``."""

    def __init__(self, name: str, rows: Callable[[Case], Sequence[tuple[str, str, list]]],
                 *, reason: str = "finished", error: str | None = None,
                 capabilities: frozenset[str] = frozenset(CAPABILITIES)) -> None:
        super().__init__(label=name)
        self.rows = rows
        self.reason = reason
        self.error = error
        self.capabilities = capabilities
        self.calls: list[tuple[str, Kill | None]] = []

    def run(self, case: Case, *, run_id: str, capture_path: Path, work_dir: Path,
            kill: Kill | None = None, time_limit: float | None = None) -> EngineOutput:
        self.calls.append((case.name, kill))
        began = time.monotonic()
        with CaptureWriter(Path(capture_path) / f"{self.name}.jsonl", engine=self.name,
                           case=case.name, run_id=run_id) as writer:
            for component, stream, values in self.rows(case):
                writer.write(component, stream, 1, values)
        return EngineOutput(self.name, self.reason, capture_path, writer.count,
                            time.monotonic() - began, error=self.error)


@pytest.fixture
def scripted() -> Callable[..., ScriptedAdapter]:
    return ScriptedAdapter


USER_TOPOLOGY = '''
"""A small user project: a seeded spout of words, an upper-casing bolt."""

from compat.storm_api import Grouping, Topology

from user_words import Upper, Words


class Shout(Topology):
    config = {CONFIG}

    words = Words.spec()
    upper = Upper.spec(inputs={words: Grouping.fields("word")}, par=2)
'''

USER_COMPONENTS = '''
import os
import random

from compat.storm_api import Bolt, Spout


class Words(Spout):
    outputs = ["word"]

    def initialize(self, conf, ctx):
        self.rng = random.Random(conf.get("user.seed", 1))
        self.limit = conf.get("user.limit")
        self.emitted = 0

    def next_tuple(self):
        if self.limit is not None and self.emitted >= self.limit:
            return
        self.emit([self.rng.choice(["ant", "bee", "cat", "dog"])])
        self.emitted += 1

    def is_exhausted(self):
        return self.limit is not None and self.emitted >= self.limit


class Upper(Bolt):
    outputs = ["word", "upper", "where"]

    def process(self, tup):
        word = tup.values[0]
        where = os.getpid() if self.conf_where == "pid" else 0
        self.emit([word, word.upper(), where])

    def initialize(self, conf, ctx):
        self.conf_where = conf.get("user.where", "none")
'''


def write_user_project(root: Path, config: dict[str, Any] | None = None) -> Path:
    """A streamparse-layout project ``root`` with topology ``shout``."""
    (root / "topologies").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "topologies" / "shout.py").write_text(
        textwrap.dedent(USER_TOPOLOGY).replace("{CONFIG}", repr(config or {})))
    (root / "src" / "user_words.py").write_text(textwrap.dedent(USER_COMPONENTS))
    return root


@pytest.fixture
def user_project(tmp_path: Path) -> Path:
    return write_user_project(tmp_path / "userproj", {"topology.acker.executors": 0})


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory):
    """A real Spark standalone cluster (a master and two one-core workers from the
    installed pyspark) on loopback, started once per run by the one module that uses it
    (tests/conformance/test_spark_cluster.py) and stopped, by pid, when that module ends,
    so its three JVMs do not sit through the rest of the run. Its daemons (and the executors they
    start) are session services
    for the orphan check. Tests that use it carry their own timeout marks: the first one
    pays the ~10 s start."""
    import tests.conftest as suite
    from conformance.spark_cluster import StandaloneCluster

    cluster = StandaloneCluster(tmp_path_factory.mktemp("spark-cluster"), workers=2,
                                cores=1, memory="1g")
    cluster.start()
    pids = set(cluster.pids)
    suite.SESSION_SERVICE_PIDS.update(pids)
    try:
        yield cluster
    finally:
        cluster.stop()
        suite.SESSION_SERVICE_PIDS.difference_update(pids)
