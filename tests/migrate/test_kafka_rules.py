"""The ``kafka`` rule: Java specs of Storm's KafkaSpout/KafkaBolt become the native connectors.

Each mapping is a literal before/after pair run through every source rule, as
``heron-migrate`` runs them (so streamparse imports move too); each case the rule cannot
map keeps its code and gets exactly one ERROR (the ``unsupported`` rule leaves it to
this one); every output is fed back in to show a second run changes nothing.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from migrate.findings import Finding, Level
from migrate.project import migrate_tree
from migrate.rules import select_rules
from migrate.rules.base import Rule
from migrate.transform import transform_source

SOURCE_RULES = [r for r in select_rules() if isinstance(r, type) and issubclass(r, Rule)]


def migrate(code: str, rules: list[type[Rule]] | None = None) -> tuple[str, list[Finding]]:
    result = transform_source(textwrap.dedent(code), "topologies/t.py", rules or SOURCE_RULES)
    return result.code, result.findings


def attention(findings: list[Finding]) -> list[Finding]:
    """Findings a person must read (WARNING/ERROR), plus every finding of the kafka rule."""
    return [f for f in findings if f.level is not Level.INFO or f.rule_id == "kafka"]


def assert_migrates(before: str, after: str) -> list[Finding]:
    """``before`` becomes ``after``, and ``after`` is left alone by a second run."""
    code, findings = migrate(before)
    assert code == textwrap.dedent(after)
    again, second = migrate(code)
    assert again == code
    assert not [f for f in second if f.rule_id == "kafka"]
    return attention(findings)


def test_storm_kafka_client_spout_becomes_native_spout_with_its_settings() -> None:
    findings = assert_migrates('''
        from streamparse import Grouping, JavaSpout, Topology

        from bolts.count import Count


        class WordCount(Topology):
            kafka = JavaSpout.spec(
                name="kafka-words",
                full_class_name="org.apache.storm.kafka.spout.KafkaSpout",
                args_list=["k1:9092,k2:9092", "words"],
                par=3,
                outputs=["topic", "partition", "offset", "key", "value"],
            )
            count = Count.spec(inputs={kafka: Grouping.fields("value")})
        ''', '''
        from compat.storm_api import Grouping, Topology

        from bolts.count import Count
        from compat.connectors.kafka import KafkaSpout


        class WordCount(Topology):
            kafka = KafkaSpout.spec(
                name="kafka-words",
                par=3,
                config={
                    "heron.connectors.kafka.bootstrap.servers": "k1:9092,k2:9092",
                    "heron.connectors.kafka.spout.topics": "words",
                },
            )
            count = Count.spec(inputs={kafka: Grouping.fields("value")})
        ''')
    [finding] = findings
    assert (finding.level, finding.rule_id, finding.line) == (Level.WARNING, "kafka", 8)
    assert "assumed 'k1:9092,k2:9092' is bootstrap.servers, 'words' is the topic" in finding.message
    assert "default record fields" in finding.message
    assert "group.id" in finding.manual and "check the Java class" in finding.manual


def test_kafka_bolt_becomes_sink_keeping_inputs_and_merging_config() -> None:
    findings = assert_migrates(
        '''
        from streamparse import JavaBolt, Topology

        class T(Topology):
            out = JavaBolt.spec(full_class_name="org.apache.storm.kafka.bolt.KafkaBolt",
                                args_list=["broker:9092", "counts"], inputs=[count], par=2,
                                config={"topology.tick.tuple.freq.secs": 1})
        ''',
        '''
        from compat.storm_api import Topology
        from compat.connectors.kafka import KafkaSink

        class T(Topology):
            out = KafkaSink.spec(inputs=[count],
                                par=2,
                                config={"topology.tick.tuple.freq.secs": 1, "heron.connectors.kafka.bootstrap.servers": "broker:9092", "heron.connectors.kafka.sink.topic": "counts"})
        ''',  # noqa: E501
    )
    [finding] = findings
    assert finding.level is Level.WARNING
    assert "org.apache.storm.kafka.bolt.KafkaBolt" in finding.message
    assert "'key' and 'message' fields" in finding.manual


def test_old_storm_kafka_spout_with_broker_and_topics_is_mapped() -> None:
    findings = assert_migrates(
        '''
        from streamparse import JavaSpout
        a = JavaSpout.spec(full_class_name="org.apache.storm.kafka.KafkaSpout",
                           args_list=["PLAINTEXT://b:9092", "clicks,views"])
        b = JavaSpout.spec(full_class_name="storm.kafka.KafkaSpout", args_list=("b:9092", "x", "y"))
        ''',
        '''
        from compat.connectors.kafka import KafkaSpout

        a = KafkaSpout.spec(config={
                               "heron.connectors.kafka.bootstrap.servers": "PLAINTEXT://b:9092",
                               "heron.connectors.kafka.spout.topics": ["clicks", "views"],
                           })
        b = KafkaSpout.spec(config={"heron.connectors.kafka.bootstrap.servers": "b:9092", "heron.connectors.kafka.spout.topics": ["x", "y"]})
        ''',  # noqa: E501
    )
    assert [f.level for f in findings] == [Level.WARNING, Level.WARNING]
    assert "storm-kafka (Storm 1.x" in findings[0].message
    assert "'clicks,views' is the topics" in findings[0].message


def test_positional_arguments_and_aliased_module_are_mapped() -> None:
    assert_migrates(
        '''
        import streamparse as sp
        class T(sp.Topology):
            s = sp.JavaSpout.spec("kafka", None, "org.apache.storm.kafka.spout.KafkaSpout",
                                  ["h:1", "t"], 2)
        ''',
        '''
        import compat.storm_api as sp
        from compat.connectors.kafka import KafkaSpout

        class T(sp.Topology):
            s = KafkaSpout.spec(name="kafka", par=2, config={"heron.connectors.kafka.bootstrap.servers": "h:1", "heron.connectors.kafka.spout.topics": "t"})
        ''',  # noqa: E501
    )


def test_settings_already_in_config_need_no_assumption() -> None:
    findings = assert_migrates('''
        from compat.storm_api import JavaSpout
        s = JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout",
                           config={"heron.connectors.kafka.bootstrap.servers": "h:9092",
                                   "heron.connectors.kafka.spout.topic.pattern": "logs-.*"})
        ''', '''
        from compat.connectors.kafka import KafkaSpout

        s = KafkaSpout.spec(config={"heron.connectors.kafka.bootstrap.servers": "h:9092",
                                   "heron.connectors.kafka.spout.topic.pattern": "logs-.*"})
        ''')
    [finding] = findings
    assert finding.level is Level.INFO and "assumed" not in finding.message


def test_config_that_is_not_a_literal_is_kept_and_extended() -> None:
    assert_migrates('''
        from streamparse import JavaSpout
        s = JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout",
                           args_list=["h:9092", "t"], config=SHARED)
        ''', '''
        from compat.connectors.kafka import KafkaSpout

        s = KafkaSpout.spec(config={
                               **SHARED,
                               "heron.connectors.kafka.bootstrap.servers": "h:9092",
                               "heron.connectors.kafka.spout.topics": "t",
                           })
        ''')


def test_other_outputs_become_output_fields_and_ask_for_a_translator() -> None:
    findings = assert_migrates('''
        from streamparse import JavaSpout
        s = JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout",
                           args_list=["h:9092", "t"], outputs=["word"])
        ''', '''
        from compat.connectors.kafka import KafkaSpout

        s = KafkaSpout.spec(config={
                               "heron.connectors.kafka.bootstrap.servers": "h:9092",
                               "heron.connectors.kafka.spout.topics": "t",
                               "heron.connectors.kafka.spout.output.fields": ["word"],
                           })
        ''')
    [finding] = findings
    assert finding.level is Level.ERROR
    assert "heron.connectors.kafka.spout.record.translator" in finding.message
    assert "list of 1 values" in finding.message


def test_other_outputs_with_a_translator_given_are_a_warning() -> None:
    _code, findings = migrate('''
        from streamparse import JavaSpout
        s = JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout",
                           args_list=["h:9092", "t"], outputs=["word"],
                           config={"heron.connectors.kafka.spout.record.translator": "m:f"})
        ''')
    [finding] = attention(findings)
    assert finding.level is Level.WARNING and "returns values in this order" in finding.message


def test_storm1_kafka_bolt_conf_keys_are_mapped() -> None:
    findings = assert_migrates(
        '''
        from streamparse import JavaBolt
        b = JavaBolt.spec(full_class_name="storm.kafka.bolt.KafkaBolt", inputs=[x], config={
            "topic": "out",
            "kafka.broker.properties": {"metadata.broker.list": "b1:9092", "request.required.acks": "1",
                                        "serializer.class": "kafka.serializer.StringEncoder"},
        })
        ''',  # noqa: E501
        '''
        from compat.connectors.kafka import KafkaSink

        b = KafkaSink.spec(inputs=[x], config={
            "topic": "out",
            "kafka.broker.properties": {"metadata.broker.list": "b1:9092", "request.required.acks": "1",
                                        "serializer.class": "kafka.serializer.StringEncoder"},
            "heron.connectors.kafka.sink.topic": "out",
            "heron.connectors.kafka.bootstrap.servers": "b1:9092",
            "heron.connectors.kafka.producer.properties": {"request.required.acks": "1"},
        })
        ''',  # noqa: E501
    )
    [finding] = findings
    assert finding.level is Level.WARNING
    assert "librdkafka producer property" in finding.message
    assert "serializer.class dropped" in finding.message


def test_bolt_outputs_are_dropped_with_a_warning() -> None:
    _code, findings = migrate('''
        from streamparse import JavaBolt
        b = JavaBolt.spec(full_class_name="org.apache.storm.kafka.bolt.KafkaBolt",
                          args_list=["h:9092", "t"], inputs=[x], outputs=["ignored"])
        ''')
    [finding] = attention(findings)
    assert finding.level is Level.WARNING and "outputs dropped" in finding.message


UNMAPPABLE = [
    ('JavaSpout.spec(full_class_name="storm.kafka.KafkaSpout", '
     'args_list=["zk1:2181,zk2:2181", "t", "/kafka", "ids"])', "ZooKeeper address"),
    ('JavaSpout.spec(full_class_name="org.apache.storm.kafka.KafkaSpout", '
     'args_list=["b:9092", "t", "/kafka"])', "'/kafka') is neither host:port"),
    ('JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout", '
     'args_list=["b:9092", "t", 3])', "argument 3 of args_list (3) is not a string literal"),
    ('JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout", '
     'args_list=ARGS)', "args_list (ARGS) is not a literal list"),
    ('JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout", '
     'args_list=["b:9092"])', "no topic"),
    ('JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout", '
     'args_list=["t"])', "no broker address"),
    ('JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout", '
     'args_list=["a:1", "b:2", "t"])', "two broker lists"),
    ('JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout", '
     'args_list=["a:1", "t"], outputs=[Stream(fields=["v"], name="s")])',
     "not a literal list of field names"),
    ('JavaBolt.spec(full_class_name="org.apache.storm.kafka.bolt.KafkaBolt", '
     'args_list=["a:1", "t1", "t2"], inputs=[x])', "several topics"),
    ('JavaBolt.spec(full_class_name="org.apache.storm.kafka.bolt.KafkaBolt", inputs=[x])',
     "no broker address"),
]


@pytest.mark.parametrize("call,reason", UNMAPPABLE)
def test_unmappable_spec_is_left_as_it_is_with_one_error(call: str, reason: str) -> None:
    source = f"from compat.storm_api import JavaBolt, JavaSpout\n\n\nc = {call}\n"
    code, findings = migrate(source)
    assert code == source
    [finding] = attention(findings)
    assert (finding.level, finding.rule_id) == (Level.ERROR, "kafka")
    assert (finding.path, finding.line) == ("topologies/t.py", 4)
    assert reason in finding.message and "not rewritten" in finding.message
    assert "from compat.connectors.kafka import Kafka" in finding.manual


def test_without_the_kafka_rule_unsupported_still_reports_kafka_specs() -> None:
    source = ('from streamparse import JavaSpout\n'
              's = JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout", '
              'args_list=["h:9092", "t"])\n')
    rules = select_rules(skip=["kafka"])
    code, findings = migrate(
        source, [r for r in rules if isinstance(r, type) and issubclass(r, Rule)]
    )
    assert "JavaSpout.spec(" in code
    [finding] = attention(findings)
    assert (finding.level, finding.rule_id) == (Level.ERROR, "unsupported")


def test_other_java_classes_stay_with_the_unsupported_rule() -> None:
    source = ('from streamparse import JavaBolt\n'
              'b = JavaBolt.spec(full_class_name="com.acme.KafkaBolt", args_list=["h:9092", "t"])\n'
              'c = JavaBolt.spec(serialized_java=b"...", full_class_name='
              '"org.apache.storm.kafka.bolt.KafkaBolt")\n')
    code, findings = migrate(source)
    assert code == source.replace("from streamparse", "from compat.storm_api")
    assert [(f.level, f.rule_id) for f in attention(findings)] == [
        (Level.ERROR, "unsupported"), (Level.ERROR, "unsupported")]


def test_java_import_stays_while_another_java_spec_uses_it() -> None:
    code, _findings = migrate('''
        from streamparse import JavaSpout
        k = JavaSpout.spec(full_class_name="org.apache.storm.kafka.spout.KafkaSpout",
                           args_list=["h:9092", "t"])
        j = JavaSpout.spec(full_class_name="com.acme.Words")
        ''')
    assert code.splitlines()[1:3] == ["from compat.storm_api import JavaSpout",
                                      "from compat.connectors.kafka import KafkaSpout"]


def test_migrated_topology_compiles(tmp_path: Path, isolated_imports: None) -> None:
    """The rewritten specs are accepted by the plan compiler, as the Java ones were not."""
    pytest.importorskip("compat.connectors.kafka", reason="the Kafka connectors (and "
                        "confluent-kafka) are needed to load the topology")
    from engine.common.plan.compiler import compile_topology
    from engine.common.plan.discovery import load_topology_class

    (tmp_path / "topologies").mkdir()
    (tmp_path / "src" / "bolts").mkdir(parents=True)
    (tmp_path / "src" / "bolts" / "__init__.py").write_text("")
    (tmp_path / "src" / "bolts" / "upper.py").write_text(
        "from streamparse import Bolt\n\n\nclass Upper(Bolt):\n"
        "    outputs = ['key', 'message']\n\n    def process(self, tup):\n"
        "        self.emit([tup.values[3], tup.values[4].upper()])\n")
    topology = tmp_path / "topologies" / "upper.py"
    topology.write_text(textwrap.dedent('''\
        from streamparse import Grouping, JavaBolt, JavaSpout, Topology

        from bolts.upper import Upper


        class UpperCase(Topology):
            words = JavaSpout.spec(
                full_class_name="org.apache.storm.kafka.spout.KafkaSpout",
                args_list=["127.0.0.1:9092", "words"],
                par=2,
                outputs=["topic", "partition", "offset", "key", "value"],
            )
            upper = Upper.spec(inputs={words: Grouping.fields("key")})
            out = JavaBolt.spec(full_class_name="org.apache.storm.kafka.bolt.KafkaBolt",
                                args_list=["127.0.0.1:9092", "upper"], inputs=[upper])
        '''))
    for outcome in migrate_tree(tmp_path, select_rules()):
        assert outcome.status.value != "failed", outcome.error
        if outcome.status.value == "changed":
            outcome.path.write_text(outcome.migrated)
    plan = compile_topology(load_topology_class(topology), name="upper").plan
    assert list(plan.spouts) == ["words"] and list(plan.bolts) == ["upper", "out"]
    assert plan.components["words"].config["heron.connectors.kafka.spout.topics"] == "words"
