"""The ``heronpy`` and ``heronpy-builder`` rules on small sources, and the CLI's
``--heronpy`` mode: what is rewritten, what is reported and left, and bad input."""

from __future__ import annotations

import textwrap
from pathlib import Path

from click.testing import CliRunner

from migrate.cli import command
from migrate.findings import Level
from migrate.rules import select_rules
from migrate.transform import transform_source

RULES = select_rules(heronpy=True)


def migrate(code: str, path: str = "topologies/demo.py"):
    return transform_source(textwrap.dedent(code), path, RULES)


def errors(result) -> list[tuple[int, str]]:
    return [(f.line, f.message) for f in result.findings if f.level is Level.ERROR]


def test_a_builder_main_becomes_a_topology_class_named_after_the_file():
    result = migrate('''\
        import sys
        import heronpy.api.api_constants as constants
        from heronpy.api.topology import TopologyBuilder
        from heronpy.api.stream import Grouping
        from demo_pkg import Words, Count

        if __name__ == '__main__':
          builder = TopologyBuilder(name=sys.argv[1])
          words = builder.add_spout("words", Words, 2)
          builder.add_bolt("count", Count, 3, {words: Grouping.LOWEST},
                           config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 5})
          conf = {constants.TOPOLOGY_RELIABILITY_MODE:
                  constants.TopologyReliabilityMode.ATLEAST_ONCE}
          builder.set_config(conf)
          builder.build_and_submit()
        ''', "topologies/word_totals.py")
    assert result.code == textwrap.dedent('''\
        from streamparse import Topology, Grouping
        from demo_pkg import Words, Count


        class WordTotals(Topology):
          words = Words.spec(name="words", par=2)
          count = Count.spec(name="count", par=3, inputs={words: Grouping.GLOBAL},
                           config={'topology.tick.tuple.freq.secs': 5})
          config = {'topology.max.spout.pending': 100, 'topology.reliability.mode':
                  'ATLEAST_ONCE'}
        ''')
    assert errors(result) == []
    compile(result.code, "word_totals.py", "exec")
    # what the heronpy rule found in the class is reported where the main had it
    assert {f.line for f in result.findings if "constant" in f.message} == {11, 12, 13}
    assert [f.line for f in result.findings if "LOWEST" in f.message] == [10]


def test_a_statement_the_builder_rule_cannot_carry_leaves_the_file_alone():
    source = '''\
        from heronpy.api.topology import TopologyBuilder
        from demo_pkg import Words

        if __name__ == '__main__':
          builder = TopologyBuilder(name="demo")
          for i in range(2):
            builder.add_spout(f"words{i}", Words, 1)
          builder.build_and_submit()
        '''
    result = transform_source(textwrap.dedent(source), "topologies/demo.py",
                              select_rules(["heronpy-builder"], heronpy=True))
    assert result.code == textwrap.dedent(source)
    ((line, message),) = errors(result)
    assert line == 6 and "builder main not rewritten" in message


def test_bolts_stop_auto_acking_and_unmapped_heronpy_is_reported_where_used():
    result = migrate('''\
        from heronpy.api.bolt.bolt import Bolt as HeronBolt
        from heronpy.api.metrics import CountMetric


        class Count(HeronBolt):
            """Counts."""
            outputs = ['word']

            def initialize(self, config, ctx):
                self.metric = CountMetric()
                ctx.register_metric("n", self.metric, 1)
                self.task = ctx.get_task_id()

            def process(self, tup):
                self.log(tup.roots)
                self.ack(tup)
        ''', "src/demo_pkg/count.py")
    assert "from streamparse import Bolt as HeronBolt" in result.code
    assert '"""Counts."""\n    auto_anchor = False\n    auto_ack = False\n    auto_fail = False' \
        in result.code
    assert "from heronpy.api.metrics import CountMetric" in result.code  # left, reported
    found = errors(result)
    assert [line for line, _ in found] == [2, 10, 11, 12, 15]
    assert "self.task_id" in next(f.manual for f in result.findings if f.line == 12)


def test_a_topology_class_gets_heronpys_defaults_before_its_own_config():
    result = migrate('''\
        from heronpy.api.topology import Topology
        from demo_pkg import Words, SETTINGS

        class Demo(Topology):
            config = SETTINGS
            words = Words.spec(par=2, optional_outputs=['extra'])
        ''')
    assert ("config = {'topology.reliability.mode': 'ATMOST_ONCE', "
            "'topology.max.spout.pending': 100, **SETTINGS}") in result.code
    assert [m for _, m in errors(result)] == [
        "spec(optional_outputs=...) left: streamparse specs take no extra outputs"]


def test_a_star_import_is_reported_and_left():
    source = "from heronpy.api.stream import *\n"
    result = migrate(source)
    assert result.code == source
    assert errors(result) == [(1, "from heronpy.api.stream import * left as it is")]


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "topologies").mkdir()
    (tmp_path / "topologies" / "demo.py").write_text(textwrap.dedent(text))
    return tmp_path


def test_cli_diff_mode_writes_nothing_and_lists_the_heronpy_rules(tmp_path):
    project = _project(tmp_path, '''\
        from heronpy.api.topology import Topology
        from heronpy.api.stream import Grouping
        ''')
    before = (project / "topologies" / "demo.py").read_text()
    result = CliRunner().invoke(command, ["--heronpy", str(project)])
    assert result.exit_code == 1
    assert "+from streamparse import Topology, Grouping" in result.stdout
    assert (project / "topologies" / "demo.py").read_text() == before
    listed = CliRunner().invoke(command, ["--heronpy", "--list-rules"])
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == [
        "heronpy-builder", "heronpy"]


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    project = _project(tmp_path, "from heronpy.api.topology import Topology\nclass X(:\n")
    result = CliRunner().invoke(command, ["--heronpy", "--write", str(project)])
    assert result.exit_code == 2
    failed = [line for line in result.stderr.splitlines() if line.startswith("failed:")]
    assert failed == [line for line in failed if "topologies/demo.py:2:" in line] and failed
    assert "Traceback" not in result.output
    unknown = CliRunner().invoke(command, ["--heronpy", "--only", "imports", str(project)])
    assert unknown.exit_code == 2 and "unknown rule id(s) with --heronpy: imports" in \
        unknown.stderr
