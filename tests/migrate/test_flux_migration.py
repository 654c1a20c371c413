"""The ``flux`` rule: a Flux file becomes ``topologies/<name>.py``, the YAML kept as it is.

The generated file is checked three ways: as golden text, by compiling the class it
defines with the engine's plan compiler, and against the plan the engine builds from the
YAML itself (``read_flux(...).topology_class()``), which must be equal. Every case the
rule cannot carry is an ERROR at its line with nothing written; a second run changes
nothing.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from compat.flux import read_flux
from engine.common.plan.compiler import compile_topology
from engine.common.plan.discovery import load_topology_class
from migrate.cli import command
from migrate.findings import Level
from migrate.outcome import Status
from migrate.report import render_text
from migrate.rules.flux import FluxRule
from tests.migrate.tree_snapshot import snapshot

SHELL_FLUX = """\
# a word count in Flux
name: "words"
config:
  topology.workers: 1
  topology.max.spout.pending: ${pending}
spouts:
  - id: "sentences"
    className: "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
    constructorArgs:
      - ["python3", "sentences.py", "${rounds}"]
      - ["sentence"]
bolts:
  - id: "split-words"
    className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
    constructorArgs:
      - ["python3", "split.py"]
    configMethods:
      - name: "setNamedStream"
        args: ["long", ["word"]]
      - name: "setDefaultStream"
        args: [["word"]]
    parallelism: 2
  - id: "count"
    className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
    constructorArgs:
      - ["node", "count.js"]
      - ["word", "count"]
    parallelism: 3
  - id: "long"
    className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
    constructorArgs:
      - ["python3", "long.py"]
  - id: "all"
    className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
    constructorArgs:
      - ["python3", "all.py"]
streams:
  - from: "sentences"
    to: "split-words"
    grouping:
      type: LOCAL_OR_SHUFFLE
  - from: "split-words"
    to: "count"
    grouping:
      type: FIELDS
      args: ["word"]
  - from: "split-words"
    to: "long"
    grouping:
      type: GLOBAL
      streamId: "long"
  - from: "count"
    to: "all"
    grouping:
      type: ALL
  - from: "sentences"
    to: "all"
    grouping:
      type: NONE
"""

SHELL_PROPERTIES = "pending=100\nrounds=3\n"

SHELL_EXPECTED = '''\
"""Topology words: written by heron-migrate from the Flux file words.yaml.

The YAML is kept and runs as it is too:

    heron run words.yaml --filter dev.properties

This file is the same topology in Python, with the --filter values it was read with.
"""

from compat.storm_api import Grouping, ShellBolt, ShellSpout, Stream, Topology


class Words(Topology):
    config = {
        "topology.workers": 1,
        "topology.max.spout.pending": 100,
    }

    sentences = ShellSpout.spec(
        name="sentences",
        command="python3 sentences.py 3",
        script="",
        par=1,
        outputs=["sentence"],
    )

    split_words = ShellBolt.spec(
        name="split-words",
        command="python3",
        script="split.py",
        inputs={sentences: Grouping.LOCAL_OR_SHUFFLE},
        par=2,
        outputs=[
            Stream(fields=["word"], name="long"),
            Stream(fields=["word"], name="default"),
        ],
    )

    count = ShellBolt.spec(
        name="count",
        command="node",
        script="count.js",
        inputs={split_words: Grouping.fields("word")},
        par=3,
        outputs=["word", "count"],
    )

    long = ShellBolt.spec(
        name="long",
        command="python3",
        script="long.py",
        inputs={split_words["long"]: Grouping.GLOBAL},
        par=1,
    )

    all = ShellBolt.spec(
        name="all",
        command="python3",
        script="all.py",
        inputs={count: Grouping.ALL, sentences: Grouping.NONE},
        par=1,
    )
'''

KAFKA_FLUX = """\
name: "kafka-counts"
components:
  - id: "builder"
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder"
    constructorArgs: ["${brokers}", ["lines"]]
    configMethods:
      - name: "setProp"
        args: ["group.id", "counts"]
      - name: "setFirstPollOffsetStrategy"
        args: ["EARLIEST"]
  - id: "spoutConfig"
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig"
    constructorArgs: [ref: "builder"]
  - id: "props"
    className: "java.util.Properties"
    configMethods:
      - name: "put"
        args: ["bootstrap.servers", "${brokers}"]
  - id: "selector"
    className: "org.apache.storm.kafka.bolt.selector.DefaultTopicSelector"
    constructorArgs: ["counts"]
spouts:
  - id: "kafka"
    className: "org.apache.storm.kafka.spout.KafkaSpout"
    constructorArgs: [ref: "spoutConfig"]
    parallelism: 3
bolts:
  - id: "count"
    className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
    constructorArgs:
      - ["python3", "count.py"]
      - ["key", "message"]
  - id: "out"
    className: "org.apache.storm.kafka.bolt.KafkaBolt"
    configMethods:
      - name: "withProducerProperties"
        args: [ref: "props"]
      - name: "withTopicSelector"
        args: [ref: "selector"]
streams:
  - from: "kafka"
    to: "count"
    grouping:
      type: FIELDS
      args: ["value"]
  - from: "count"
    to: "out"
    grouping:
      type: SHUFFLE
"""

KAFKA_EXPECTED_BODY = '''\
from compat.connectors.kafka import KafkaSink, KafkaSpout
from compat.storm_api import Grouping, ShellBolt, Topology


class KafkaCounts(Topology):

    kafka = KafkaSpout.spec(
        name="kafka",
        par=3,
        config={
            "heron.connectors.kafka.bootstrap.servers": "127.0.0.1:9092",
            "heron.connectors.kafka.spout.topics": ["lines"],
            "heron.connectors.kafka.spout.first.poll.offset.strategy": "EARLIEST",
            "heron.connectors.kafka.consumer.properties": {"group.id": "counts"},
        },
    )

    count = ShellBolt.spec(
        name="count",
        command="python3",
        script="count.py",
        inputs={kafka: Grouping.fields("value")},
        par=1,
        outputs=["key", "message"],
    )

    out = KafkaSink.spec(
        name="out",
        inputs={count: Grouping.SHUFFLE},
        par=1,
        config={
            "heron.connectors.kafka.bootstrap.servers": "127.0.0.1:9092",
            "heron.connectors.kafka.producer.properties": {},
            "heron.connectors.kafka.sink.topic": "counts",
        },
    )
'''


def run(*args: object):
    return CliRunner().invoke(command, [str(a) for a in args])


def flux_project(root: Path, yaml_text: str, properties: str = "", name: str = "words.yaml",
                 scripts: bool = True) -> Path:
    """A Flux project: the YAML at the top, shell scripts in src/ (where the engine
    starts a migrated project's shell components), a --filter file."""
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(yaml_text)
    if properties:
        (root / "dev.properties").write_text(properties)
    if scripts:
        (root / "src").mkdir(exist_ok=True)
    return root


def plan_of_file(path: Path, name: str):
    return compile_topology(load_topology_class(path), name=name).plan


def plan_of_yaml(path: Path, properties: Path | None, name: str):
    return compile_topology(read_flux(path, filter_file=properties).topology_class(),
                            name=name).plan


def test_shell_flux_becomes_topology_file_with_the_yamls_plan(tmp_path: Path,
                                                              isolated_imports: None) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX, SHELL_PROPERTIES)
    before = (root / "words.yaml").read_bytes()
    result = run(root, "--write", "--filter", root / "dev.properties")
    assert result.exit_code == 0, result.output
    generated = root / "topologies" / "words.py"
    assert generated.read_text() == SHELL_EXPECTED
    assert (root / "words.yaml").read_bytes() == before
    plan = plan_of_file(generated, "words")
    assert list(plan.components) == ["sentences", "split-words", "count", "long", "all"]
    assert plan == plan_of_yaml(root / "words.yaml", root / "dev.properties", "words")


def test_second_run_changes_nothing(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX, SHELL_PROPERTIES)
    assert run(root, "--write", "--filter", root / "dev.properties").exit_code == 0
    after_first = snapshot(root)
    again = run(root, "--check", "--filter", root / "dev.properties")
    assert again.exit_code == 0, again.output
    assert run(root, "--write", "--filter", root / "dev.properties").exit_code == 0
    assert snapshot(root) == after_first


def test_kafka_flux_becomes_native_connector_specs(tmp_path: Path,
                                                   isolated_imports: None) -> None:
    root = flux_project(tmp_path / "p", KAFKA_FLUX, "brokers=127.0.0.1:9092\n",
                        name="counts.yaml")
    outcomes = FluxRule(filter_file=root / "dev.properties").apply(root)
    [created] = [o for o in outcomes if o.created]
    assert created.path == root / "topologies" / "kafka-counts.py"
    assert created.migrated.split('"""\n\n', 1)[1] == KAFKA_EXPECTED_BODY
    pytest.importorskip("compat.connectors.kafka", reason="the Kafka connectors (and "
                        "confluent-kafka) are needed to load the topology")
    created.path.parent.mkdir()
    created.path.write_text(created.migrated)
    plan = plan_of_file(created.path, "kafka-counts")
    assert plan == plan_of_yaml(root / "counts.yaml", root / "dev.properties", "kafka-counts")


def test_python_component_and_direct_stream_are_carried(tmp_path: Path,
                                                        isolated_imports: None) -> None:
    # a package name no other test's project uses: a ``spouts`` package another test
    # imported earlier in the run would hide this one's
    root = flux_project(tmp_path / "p", textwrap.dedent("""\
        name: "mixed"
        spouts:
          - id: "numbers"
            className: "mixed_spouts.numbers:Numbers"
        bolts:
          - id: "pick"
            className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
            constructorArgs: [["python3", "pick.py"], ["n"]]
          - id: "sink"
            className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
            constructorArgs: [["python3", "sink.py"]]
        streams:
          - from: "numbers"
            to: "pick"
            grouping: {type: SHUFFLE}
          - from: "pick"
            to: "sink"
            grouping: {type: DIRECT}
        """), name="mixed.yaml")
    (root / "src" / "mixed_spouts").mkdir()
    (root / "src" / "mixed_spouts" / "__init__.py").write_text("")
    (root / "src" / "mixed_spouts" / "numbers.py").write_text(
        "from compat.storm_api import Spout\n\n\nclass Numbers(Spout):\n"
        "    outputs = ['n']\n\n    def next_tuple(self):\n        pass\n")
    result = run(root, "--write")
    assert result.exit_code == 0, result.output
    text = (root / "topologies" / "mixed.py").read_text()
    assert "from mixed_spouts.numbers import Numbers" in text
    assert 'numbers = Numbers.spec(\n        name="numbers",\n        par=1,\n    )' in text
    assert 'outputs=[Stream(fields=["n"], name="default", direct=True)]' in text
    assert "inputs={pick: Grouping.DIRECT}" in text
    generated = plan_of_file(root / "topologies" / "mixed.py", "mixed")
    assert generated == plan_of_yaml(root / "mixed.yaml", None, "mixed")


def test_flux_file_given_as_path_writes_beside_it(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX, SHELL_PROPERTIES)
    result = run(root / "words.yaml", "--write", "--filter", root / "dev.properties")
    assert result.exit_code == 0, result.output
    assert (root / "topologies" / "words.py").read_text() == SHELL_EXPECTED


def test_out_tree_gets_the_topology_file_and_the_input_is_untouched(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX, SHELL_PROPERTIES, scripts=False)
    before = snapshot(root)
    result = run(root, "--out-tree", tmp_path / "out", "--filter", root / "dev.properties")
    assert result.exit_code == 0, result.output
    assert snapshot(root) == before
    assert (tmp_path / "out" / "topologies" / "words.py").read_text() == SHELL_EXPECTED
    assert (tmp_path / "out" / "words.yaml").read_text() == SHELL_FLUX


def test_report_says_the_yaml_runs_directly(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX, SHELL_PROPERTIES)
    outcomes = FluxRule(filter_file=root / "dev.properties").apply(root)
    report = render_text(outcomes, root)
    assert ("words.yaml:0:0: INFO [flux] Flux file kept as it is (the engine runs it directly: "
            "heron run words.yaml --filter FILE.properties); topologies/words.py is the same "
            "topology in Python") in report
    assert "Created 1 new files: topologies/words.py." in report


def test_shell_scripts_outside_src_are_a_warning(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX, SHELL_PROPERTIES, scripts=False)
    (root / "resources").mkdir()
    outcomes = FluxRule(filter_file=root / "dev.properties").apply(root)
    [warning] = [f for o in outcomes for f in o.findings if f.level is Level.WARNING]
    assert "Flux starts the shell components in resources/" in warning.message
    assert "copy the scripts" in warning.manual


def test_unresolved_placeholders_are_errors_and_nothing_is_written(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX)
    before = snapshot(root)
    result = run(root, "--write")
    assert result.exit_code == 0  # written what it could; the ERRORs are for a person
    assert snapshot(root) == before
    outcomes = FluxRule().apply(root)
    errors = [f for o in outcomes for f in o.findings if f.level is Level.ERROR]
    assert [(f.line, f.message) for f in errors[:2]] == [
        (5, "unresolved placeholder: no value for ${pending} (not in the --filter "
            "properties); left as it is"),
        (10, "unresolved placeholder: no value for ${rounds} (not in the --filter "
             "properties); left as it is")]
    assert all("--filter FILE.properties" in f.manual for f in errors)
    assert "topologies/words.py not written" in errors[-1].message
    assert run(root, "--check").exit_code == 1


def test_placeholder_that_breaks_a_value_asks_for_filter(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX.replace("parallelism: 3",
                                                           "parallelism: ${count.par}"),
                        "pending=1\nrounds=1\n")
    outcomes = FluxRule(filter_file=root / "dev.properties").apply(root)
    [error] = [f for o in outcomes for f in o.findings if f.level is Level.ERROR]
    assert (error.path, error.line) == ("words.yaml", 28)
    assert "${count.par}" in error.message and "--filter FILE.properties" in error.manual
    assert not (root / "topologies").exists()


UNCARRIED = """\
name: "hbase"
spouts:
  - id: "s"
    className: "com.acme.HBaseSpout"
bolts:
  - id: "b"
    className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
    constructorArgs: [["python3", "b.py"], ["x"]]
  - id: "h"
    className: "org.apache.storm.hbase.bolt.HBaseBolt"
streams:
  - from: "s"
    to: "b"
    grouping:
      type: CUSTOM
      customClass:
        className: "com.acme.MyGrouping"
  - from: "b"
    to: "h"
    grouping: {type: SHUFFLE}
"""


def test_each_thing_that_cannot_be_carried_is_an_error_at_its_line(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", UNCARRIED, name="hbase.yaml")
    outcomes = FluxRule().apply(root)
    assert not any(o.created for o in outcomes)
    errors = [(f.path, f.line, f.level, f.message) for o in outcomes for f in o.findings]
    assert errors[0][:3] == ("hbase.yaml", 3, Level.ERROR)
    assert "Java class com.acme.HBaseSpout" in errors[0][3]
    assert errors[1:] == [
        ("hbase.yaml", 10, Level.ERROR,
         "Java class org.apache.storm.hbase.bolt.HBaseBolt has no equivalent here"),
        ("hbase.yaml", 15, Level.ERROR,
         "CUSTOM grouping (a Java class) has no equivalent here")]
    result = run(root, "--check")
    assert result.exit_code == 1
    assert "hbase.yaml:3:1: ERROR [flux] Flux topology not converted" in result.output


def test_topology_source_is_an_error(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", 'name: "java"\ntopologySource:\n  className: '
                        '"com.acme.Topo"\nspouts: []\n', name="java.yaml")
    [outcome] = FluxRule().apply(root)
    [error] = outcome.findings
    assert (error.line, error.level) == (2, Level.ERROR)
    assert "topologySource (com.acme.Topo)" in error.message


def test_unparseable_yaml_fails_with_its_line_and_nothing_is_written(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", 'name: "broken"\nspouts:\n  - id: "s"\n'
                        '    className: [oops\n', name="broken.yml")
    before = snapshot(root)
    result = run(root, "--write")
    assert result.exit_code == 2
    assert "failed: broken.yml:" in result.output and "invalid YAML" in result.output
    assert snapshot(root) == before
    [outcome] = FluxRule().apply(root)
    assert outcome.status is Status.FAILED and outcome.error.startswith("broken.yml:")


def test_yaml_that_is_not_flux_is_ignored(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "heron.yaml").write_text("envs:\n  prod:\n    options: {}\n")
    (root / "compose.yml").write_text("name: app\nservices:\n  web: {}\n")
    assert FluxRule().apply(root) == []


def test_existing_topology_file_is_never_overwritten(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX, SHELL_PROPERTIES)
    (root / "topologies").mkdir()
    (root / "topologies" / "words.py").write_text("# mine\n")
    outcomes = FluxRule(filter_file=root / "dev.properties").apply(root)
    assert not any(o.created for o in outcomes)
    assert (root / "topologies" / "words.py").read_text() == "# mine\n"
    warnings = [f.message for o in outcomes for f in o.findings if f.level is Level.WARNING]
    assert ("topologies/words.py exists and is not what words.yaml gives now; not "
            "overwritten") in warnings


def test_two_flux_files_with_one_name_write_one_file(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX, SHELL_PROPERTIES)
    (root / "copy").mkdir()
    (root / "copy" / "again.yaml").write_text(SHELL_FLUX)
    outcomes = FluxRule(filter_file=root / "dev.properties").apply(root)
    assert [o.path for o in outcomes if o.created] == [root / "topologies" / "words.py"]
    warnings = [f for o in outcomes for f in o.findings if f.level is Level.WARNING]
    assert any("has the same topology name 'words'" in f.message for f in warnings)


def test_name_that_is_not_a_file_name_is_reported(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", SHELL_FLUX.replace('name: "words"', 'name: "my words!"'),
                        SHELL_PROPERTIES)
    outcomes = FluxRule(filter_file=root / "dev.properties").apply(root)
    [created] = [o for o in outcomes if o.created]
    assert created.path.name == "my_words.py"
    assert "class MyWords(Topology):" in created.migrated
    assert any("'my words!' is not a file name" in f.message for f in created.findings)


def test_streams_in_a_cycle_are_an_error_and_nothing_is_written(tmp_path: Path) -> None:
    root = flux_project(tmp_path / "p", textwrap.dedent("""\
        name: "loop"
        spouts:
          - id: "s"
            className: "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
            constructorArgs: [["python3", "s.py"], ["x"]]
        bolts:
          - id: "a"
            className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
            constructorArgs: [["python3", "a.py"], ["x"]]
          - id: "b"
            className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
            constructorArgs: [["python3", "b.py"], ["x"]]
        streams:
          - {from: "s", to: "a", grouping: {type: SHUFFLE}}
          - {from: "a", to: "b", grouping: {type: SHUFFLE}}
          - {from: "b", to: "a", grouping: {type: SHUFFLE}}
        """), name="loop.yaml")
    outcomes = FluxRule().apply(root)
    assert not any(o.created for o in outcomes)
    [error] = [f for o in outcomes for f in o.findings if f.level is Level.ERROR]
    assert "topologies/loop.py not written: the streams form a cycle" in error.message
