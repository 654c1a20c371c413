"""Heron's own layout, submitted as Heron's CLI does: an ``examples/src/python/`` tree
(spouts and bolts in packages, ``word_count_topology.py`` importing
``examples.src.python.spout`` as Heron publishes it) run unchanged from the ``.py`` and
from a zipapp ``.pex`` on both engines, ``FILE - ARGS`` with the arguments reaching the
topology's main untouched, ``FILE module.ClassName NAME``, and ``heron submit local
FILE.pex - ...`` followed by ``heron kill``, which removes the definition kept for it
(and no other)."""

from __future__ import annotations

import shutil
import time
import zipapp
from collections import Counter
from pathlib import Path

import pytest

from engine.tools.cli.topology_args import MainForm, split_topology_args
from heronpy.api import heron_options
from tests.engine.cli.conftest import heron, heron_home, live_processes, real_engine, sweep  # noqa: F401
from tests.heronpy.cli_runs import heron_run

EXAMPLES = Path(__file__).parent / "examples" / "src" / "heron_examples"
WORDS = ["hello", "bye", "good", "bad", "heron", "storm"]

# examples/src/python/word_count_topology.py as Heron publishes it (its licence header
# left out): a builder script whose main takes the topology's name
WORD_COUNT_TOPOLOGY = '''\
\'\'\'Example WordCountTopology\'\'\'
import sys

import heronpy.api.api_constants as constants
from heronpy.api.topology import TopologyBuilder
from heronpy.api.stream import Grouping
from examples.src.python.spout import WordSpout
from examples.src.python.bolt import CountBolt

# Topology is defined using a topology builder
# Refer to multi_stream_topology for defining a topology by subclassing Topology
# pylint: disable=superfluous-parens
if __name__ == '__main__':
  if len(sys.argv) != 2:
    print("Topology's name is not specified")
    sys.exit(1)

  builder = TopologyBuilder(name=sys.argv[1])

  word_spout = builder.add_spout("word_spout", WordSpout, par=2)
  count_bolt = builder.add_bolt("count_bolt", CountBolt, par=2,
                                inputs={word_spout: Grouping.fields('word')},
                                config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 10})

  topology_config = {constants.TOPOLOGY_RELIABILITY_MODE:
                         constants.TopologyReliabilityMode.ATLEAST_ONCE}
  builder.set_config(topology_config)

  builder.build_and_submit()
'''

# a main with options of its own, as Heron's integration tests take `-r URL -t NAME`
WORD_COUNT_RESULTS = '''\
import argparse

from heronpy.api.topology import TopologyBuilder
from heronpy.api.stream import Grouping
from examples.src.python.spout import WordSpout
from examples.src.python.bolt import CountBolt
from examples.src.python.bolt.results_bolt import ResultsBolt

if __name__ == '__main__':
  parser = argparse.ArgumentParser()
  parser.add_argument('-r', dest='results', required=True)
  parser.add_argument('-t', dest='name', required=True)
  args = parser.parse_args()
  builder = TopologyBuilder(name=args.name)
  word_spout = builder.add_spout("word_spout", WordSpout, par=2)
  count_bolt = builder.add_bolt("count_bolt", CountBolt, par=2,
                                inputs={word_spout: Grouping.fields('word')})
  builder.add_bolt("results_bolt", ResultsBolt, par=1, inputs={count_bolt: Grouping.ALL},
                   config={"results.dir": args.results})
  builder.set_config({"topology.reliability.mode": "ATLEAST_ONCE"})
  builder.build_and_submit()
'''

RESULTS_BOLT = '''\
import os

from heronpy.api.bolt.bolt import Bolt


class ResultsBolt(Bolt):
  """Appends every (word, count) it receives to RESULTS/<task>.txt."""

  def initialize(self, config, context):
    self.out = open(os.path.join(config["results.dir"], "%d.txt" % context.get_task_id()), "a")

  def process(self, tup):
    self.out.write("%s %d\\n" % tuple(tup.values))
    self.out.flush()
    self.ack(tup)
'''

WORD_COUNT_CLASS = '''\
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology
from examples.src.python.spout import WordSpout
from examples.src.python.bolt import CountBolt


class WordCount(Topology):
  config = {"topology.reliability.mode": "ATLEAST_ONCE"}
  word_spout = WordSpout.spec(par=2)
  count_bolt = CountBolt.spec(par=2, inputs={word_spout: Grouping.fields('word')})
'''


def heron_tree(root: Path) -> Path:
    """Heron's ``examples/src/python`` layout under ``root`` (packages with
    ``__init__.py`` from ``python/`` down, none above, as in Heron's repository); the
    spout and bolt are this suite's finite Heron-style ones, so results are known."""
    python = root / "examples" / "src" / "python"
    for package, module, cls in (("spout", "word_spout", "WordSpout"),
                                 ("bolt", "count_bolt", "CountBolt")):
        (python / package).mkdir(parents=True)
        (python / package / "__init__.py").write_text(
            f"from examples.src.python.{package}.{module} import {cls}\n")
        (python / package / f"{module}.py").write_text(
            (EXAMPLES / package / f"{module}.py").read_text())
    (python / "__init__.py").write_text("")
    (python / "bolt" / "results_bolt.py").write_text(RESULTS_BOLT)
    (python / "word_count_topology.py").write_text(WORD_COUNT_TOPOLOGY)
    (python / "word_count_results.py").write_text(WORD_COUNT_RESULTS)
    (python / "word_count_class.py").write_text(WORD_COUNT_CLASS)
    return python / "word_count_topology.py"


def build_pex(root: Path, main_module: str, target: Path) -> Path:
    """A zipapp of the tree whose ``__main__`` runs ``main_module`` as Heron's pex does,
    bundling a ``heronpy`` of its own (as Heron's pexes do) that must never be imported."""
    (root / "__main__.py").write_text(
        f"import runpy\nrunpy.run_module({main_module!r}, run_name='__main__')\n")
    (root / "heronpy").mkdir(exist_ok=True)
    (root / "heronpy" / "__init__.py").write_text(
        "raise ImportError('the pex bundled heronpy was imported')\n")
    try:
        zipapp.create_archive(root, target)
    finally:
        (root / "__main__.py").unlink()
        shutil.rmtree(root / "heronpy")
    return target


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return heron_tree(tmp_path / "heron")


def _run(tmp_path: Path, engine: str, seconds: float,
         *target: str) -> tuple[dict, list, str]:
    return heron_run(["--engine", engine, "-t", str(seconds), *target],
                     tmp_path / f"capture-{engine}.jsonl", tmp_path / "logs", timeout=90)


def _counts(records: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        if (record["component"], record["stream"]) == ("count_bolt", "default"):
            word, count = record["values"]
            counts[word] = max(counts.get(word, 0), count)
    return counts


def _acks(records: list[dict]) -> Counter:
    return Counter(tuple(r["values"]) for r in records
                   if (r["component"], r["stream"]) == ("word_spout", "ackfail"))


# -- the command line: heron's options, then the topology's own part -------------------

@pytest.mark.parametrize(
    "args, head, main",
    [
        (
            ["x.pex", "-", "-r", "URL", "-t", "NAME"],
            ["x.pex"],
            MainForm("-", ["-r", "URL", "-t", "NAME"]),
        ),
        (
            ["x.py", "--engine", "storm", "-t", "5", "-", "WC", "-t", "9"],
            ["x.py", "--engine", "storm", "-t", "5"],
            MainForm("-", ["WC", "-t", "9"]),
        ),
        (
            ["-t", "5", "x.pex", "pkg.mod.Class", "NAME", "--engine"],
            ["-t", "5", "x.pex"],
            MainForm("pkg.mod.Class", ["NAME", "--engine"]),
        ),
        (
            ["topologies/x.py", "--engine", "heron", "-t", "30"],
            ["topologies/x.py", "--engine", "heron", "-t", "30"],
            None,
        ),
        (
            ["flux.yaml", "--filter", "dev.properties"],
            ["flux.yaml", "--filter", "dev.properties"],
            None,
        ),
    ],
)
def test_everything_after_the_dash_or_the_class_goes_to_the_topology(args, head, main):
    assert split_topology_args(args, {"-t", "--time", "--engine", "--filter"}, 0) == (head, main)


def test_submit_finds_the_file_after_the_cluster():
    assert split_topology_args(["local", "x.pex", "-", "a"], set(), 1) == (
        ["local", "x.pex"], MainForm("-", ["a"]))


def test_heron_options_round_trip_spaces_as_heron_writes_them():
    options = {heron_options.TMPDIR_KEY: "/tmp/a dir", heron_options.NAME_KEY: "wc"}
    raw = heron_options.format_options(options)
    assert raw == "cmdline.topologydefn.tmpdirectory=/tmp/a%%%%dir,cmdline.topology.name=wc"
    assert heron_options.parse_options(raw) == options


# -- run, from the .py and from the pex, on both engines --------------------------------

@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("engine, seconds, form", [
    ("storm", 4, "py"), ("heron", 8, "py -"), ("storm", 4, "pex -"), ("heron", 8, "pex -")])
def test_heron_word_count_runs_unchanged_from_its_layout(tree, tmp_path, engine, seconds, form):
    if form == "py":  # Heron's file where Heron keeps it, no project around it
        summary, records, _ = _run(tmp_path, engine, seconds, str(tree))
        name = "word_count_topology"
    else:
        target = tree if form == "py -" else build_pex(
            tree.parents[3], "examples.src.python.word_count_topology", tmp_path / "wc.pex")
        summary, records, _ = _run(tmp_path, engine, seconds, str(target), "-", "WordCount")
        name = "WordCount"  # the definition's name: the main's sys.argv[1]
    assert summary["topology"] == name
    assert _counts(records) == {w: 100 for w in WORDS}
    assert _acks(records) == {("ack", "message id"): 600}
    assert summary["components"]["word_spout"]["tasks"] == 2


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_topology_class_in_a_pex_is_written_under_the_name_given(tree, tmp_path):
    pex = build_pex(tree.parents[3], "examples.src.python.word_count_topology",
                    tmp_path / "wc.pex")
    summary, records, stderr = _run(tmp_path, "storm", 4, str(pex),
                                    "examples.src.python.word_count_class.WordCount", "Renamed")
    assert summary["topology"] == "Renamed"
    assert "bundles its own heronpy; this project's heronpy is the one imported" in stderr
    assert _counts(records) == {w: 100 for w in WORDS}


# -- submit to the local cluster and kill -----------------------------------------------

def _results(directory: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in directory.glob("*.txt"):
        for line in path.read_text().splitlines():
            word, _, count = line.partition(" ")
            counts[word] = max(counts.get(word, 0), int(count))
    return counts


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_submit_local_pex_with_the_topologys_own_options_then_kill(
        tree, tmp_path, real_engine, sweep, live_processes, isolated_imports):  # noqa: F811 (a fixture imported above)
    other = real_engine / "definitions" / "heronpy-other"  # another topology's, kept
    other.mkdir(parents=True)
    (other / "Other.defn").write_text("{}")
    pex = build_pex(tree.parents[3], "examples.src.python.word_count_results",
                    tmp_path / "results.pex")
    results = tmp_path / "results"
    results.mkdir()
    name = "heronpy_submitted-word_count_" + "x" * 60  # long names, as Heron's tests use
    submitted = heron("submit", "local", str(pex), "-", "-r", str(results), "-t", name)
    assert submitted.exit_code == 0, submitted.output
    assert f"submitted topology {name!r}" in submitted.output
    try:
        deadline = time.monotonic() + 60
        while _results(results) != {w: 100 for w in WORDS} and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _results(results) == {w: 100 for w in WORDS}
        listed = heron("list")
        assert "RUNNING" in listed.output
        [kept] = [d for d in (real_engine / "definitions").iterdir() if d != other]
        assert sorted(p.name for p in kept.iterdir()) == [f"{name}.defn", f"{name}.pex"]
    finally:
        killed = heron("kill", name)
    assert killed.exit_code == 0, killed.output
    # the killed topology's definition went with it, and only its own
    assert list((real_engine / "definitions").iterdir()) == [other]
    deadline = time.monotonic() + 15
    while live_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not live_processes()
