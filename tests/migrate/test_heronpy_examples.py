"""``heron-migrate --heronpy`` on Heron's example topologies (tests/heronpy/examples): each
migrated file is valid Python, the translatable topologies load as streamparse topologies
with the plan their heronpy originals have, a second run changes nothing, and the report
names every part left as heronpy, at its line.

The examples are copied with their package renamed (``hpmig_examples``): the heronpy tests
import ``heron_examples`` in this process, and a module already imported under that name
would stand in for the migrated one.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import shutil
import sys
from pathlib import Path

import pytest
import streamparse
from click.testing import CliRunner

import heronpy.api
from compat.storm_api.config import checkpointing, reliability, with_defaults
from engine.common.plan.discovery import load_topology_class
from engine.common.submission import load_topology
from migrate.cli import command
from migrate.project import Status, migrate_tree
from migrate.rules import select_rules

# Every heronpy.api module imported now, not first inside a test: ``isolated_imports``
# forgets the modules a test imports, and a heronpy module imported again later would
# hold classes of a second identity beside the ones the engines already hold.
for _module in pkgutil.walk_packages(heronpy.api.__path__, "heronpy.api."):
    importlib.import_module(_module.name)

EXAMPLES = Path(__file__).resolve().parents[1] / "heronpy" / "examples"
PACKAGE = "hpmig_examples"

#: topologies whose every part has a Storm-API counterpart (or only metrics/hooks,
#: which are reported but do not stop the topology from loading)
LOADABLE = ("word_count_topology", "half_acking_topology", "multi_stream_topology",
            "stateful_word_count_topology")


def _copy(root: Path) -> Path:
    """The examples (spouts and bolts API topologies only) under ``root``, renamed."""
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(
        "__pycache__", "streamlet_*"))
    (root / "src" / "heron_examples").rename(root / "src" / PACKAGE)
    for path in root.rglob("*.py"):
        path.write_text(path.read_text().replace("heron_examples", PACKAGE))
    return root


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> tuple[Path, Path, dict]:
    """(original copy, migrated copy, the JSON report), migrated once for the module."""
    base = tmp_path_factory.mktemp("heronpy-migrate")
    original = _copy(base / "original")
    shutil.copytree(original, base / "migrated")
    report = base / "report.json"
    result = CliRunner().invoke(command, ["--heronpy", "--write", str(base / "migrated"),
                                          "--report-json", str(report)])
    assert result.exit_code == 0, result.output
    return original, base / "migrated", json.loads(report.read_text())


def _findings(report: dict, path: str, level: str = "ERROR") -> list[dict]:
    return [f for f in report["findings"] if f["path"] == path and f["level"] == level]


def _forget_package() -> None:
    """Drop the examples' modules and folders, so the next project loads its own (the
    ``isolated_imports`` fixture restores the rest after the test)."""
    sys.path[:] = [p for p in sys.path if "heronpy-migrate" not in p]
    for module in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[module]


def _plan_facts(project: Path, name: str) -> dict:
    _forget_package()
    loaded = load_topology(project, name=name)
    facts = {}
    for comp in loaded.plan.components.values():
        facts[comp.name] = (comp.kind, comp.parallelism,
                            sorted((s.name, s.fields) for s in comp.outputs.values()),
                            sorted((i.source, i.stream, i.grouping, i.fields)
                                   for i in comp.inputs),
                            comp.python_class.split(":")[-1])
    config = dict(loaded.plan.config)
    # what the engines make of it: ackers, timeouts, pending, effectively-once, checkpoints
    facts["config"] = (reliability(with_defaults(config)), checkpointing(config))
    return facts


def test_every_migrated_file_is_valid_python(migrated):
    _, out, report = migrated
    for path in out.rglob("*.py"):
        compile(path.read_text(), str(path), "exec")
    assert report["summary"]["failed"] == 0
    assert report["summary"]["changed"] >= 10


@pytest.mark.parametrize("name", LOADABLE)
def test_translatable_topologies_load_as_streamparse_with_the_same_plan(migrated, name,
                                                                         isolated_imports):
    original, out, _ = migrated
    text = (out / "topologies" / f"{name}.py").read_text()
    assert "heronpy" not in text and "__main__" not in text
    _forget_package()
    cls = load_topology_class(out / "topologies" / f"{name}.py")
    assert issubclass(cls, streamparse.Topology)
    before, after = _plan_facts(original, name), _plan_facts(out, name)
    # the same components, parallelism, streams, subscriptions and classes...
    assert {k: v for k, v in after.items() if k != "config"} == \
        {k: v for k, v in before.items() if k != "config"}
    # ...and the reliability settings heronpy gave the original (its defaults included)
    assert after["config"] == before["config"]


def test_components_mean_what_they_meant(migrated):
    _, out, _ = migrated
    bolt = (out / "src" / PACKAGE / "bolt" / "half_ack_bolt.py").read_text()
    assert "from streamparse import Bolt" in bolt
    for flag in ("auto_anchor = False", "auto_ack = False", "auto_fail = False"):
        assert flag in bolt  # heronpy bolts ack and fail only when told
    assert "self.fail(tup)" in bolt and "self.ack(tup)" in bolt
    spout = (out / "src" / PACKAGE / "spout" / "word_spout.py").read_text()
    assert "from streamparse import Spout, Stream" in spout
    assert "self.emit([word], tup_id='message id')" in spout
    assert "def ack(self, tup_id):" in spout
    stateful = (out / "src" / PACKAGE / "bolt" / "stateful_count_bolt.py").read_text()
    assert "from compat.storm_api import StatefulComponent" in stateful
    topology = (out / "topologies" / "word_count_topology.py").read_text()
    assert "class WordCountTopology(Topology):" in topology
    assert 'WordSpout.spec(name="word_spout", par=2)' in topology
    multi = (out / "topologies" / "multi_stream_topology.py").read_text()
    # heronpy's defaults, where Storm's differ, made explicit
    assert "'topology.reliability.mode': 'ATMOST_ONCE'" in multi
    assert "'topology.max.spout.pending': 100" in multi


def test_a_second_run_changes_nothing(migrated):
    _, out, _ = migrated
    outcomes = migrate_tree(out, select_rules(heronpy=True))
    assert [o.path for o in outcomes if o.status is not Status.UNCHANGED] == []


def _lines(root: Path, path: str, text: str) -> set[int]:
    """The lines of ``root/path`` holding ``text`` (the examples may gain lines)."""
    lines = (root / path).read_text().splitlines()
    return {n for n, line in enumerate(lines, 1) if text in line}


def test_the_report_names_what_it_left(migrated):
    original, out, report = migrated

    def reported(path: str, text: str, said: str) -> None:
        want = _lines(original, path, text)
        got = {f["line"] for f in _findings(report, path) if said in f["message"]}
        assert want and want <= got, (path, text, want, got)

    bolts = f"src/{PACKAGE}/bolt"
    reported(f"{bolts}/window_size_bolt.py", "(SlidingWindowBolt):", "window bolts")
    reported(f"{bolts}/window_size_bolt.py", "(TumblingWindowBolt):", "window bolts")
    reported(f"src/{PACKAGE}/misc/test_task_hook.py", "(ITaskHook):", "ITaskHook")
    reported(f"{bolts}/count_bolt.py", "context.register_metric(", "register_metric")
    reported(f"{bolts}/count_bolt.py", "global_metrics.safe_incr", "global_metrics")
    reported(f"{bolts}/stream_aggregate_bolt.py", "context.get_this_sources()",
             "get_this_sources")
    reported("topologies/custom_grouping_topology.py", "Grouping.custom(", "Grouping.custom")
    reported("topologies/word_count_topology.py", "TOPOLOGY_AUTO_TASK_HOOKS",
             "topology.auto.task.hooks")
    reported("topologies/window_size_topology.py", "WINDOW_", "window bolts")
    # what was left is still there, as written
    assert "Grouping.custom(SampleCustomGrouping())" in (
        out / "topologies" / "custom_grouping_topology.py").read_text()
    assert "class WindowSizeBolt(SlidingWindowBolt):" in (
        out / "src" / PACKAGE / "bolt" / "window_size_bolt.py").read_text()
