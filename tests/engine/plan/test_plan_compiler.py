"""compile_topology on real streamparse 5.0.1 topologies and on compat.storm_api ones."""

from __future__ import annotations

import pytest
from streamparse import Bolt, Grouping, JavaBolt, ShellBolt, Spout, Stream, Topology
from streamparse.thrift import GlobalStreamId

from engine.common.plan import compile_topology, errors


class WordSpout(Spout):
    outputs = ["word"]

    def next_tuple(self):
        pass


class SentenceSpout(Spout):
    outputs = [
        Stream(fields=["sentence"]),
        Stream(fields=["error"], name="errors"),
        Stream(fields=["sentence"], name="targeted", direct=True),
    ]

    def next_tuple(self):
        pass


class WordCountBolt(Bolt):
    outputs = ["word", "count"]
    config = {"count.window": 60}

    def process(self, tup):
        pass


class SinkBolt(Bolt):
    outputs = []

    def process(self, tup):
        pass


class WordCount(Topology):
    """The streamparse quickstart shape."""

    word_spout = WordSpout.spec()
    count_bolt = WordCountBolt.spec(inputs={word_spout: Grouping.fields("word")}, par=2)


def test_word_count_compiles_to_spout_and_fields_grouped_bolt():
    compiled = compile_topology(WordCount, name="wordcount")
    plan = compiled.plan

    assert plan.name == "wordcount"
    assert list(plan.components) == ["word_spout", "count_bolt"]
    spout, count = plan.components["word_spout"], plan.components["count_bolt"]
    assert (spout.kind, spout.parallelism, spout.outputs["default"].fields) == (
        "spout",
        1,
        ("word",),
    )
    assert (count.kind, count.parallelism) == ("bolt", 2)
    [subscription] = count.inputs
    assert (
        subscription.source,
        subscription.stream,
        subscription.grouping,
        subscription.fields,
    ) == (
        "word_spout",
        "default",
        "fields",
        ("word",),
    )
    assert count.python_class == f"{__name__}:WordCountBolt"
    assert count.shell == ("streamparse_run", f"{__name__}.WordCountBolt")
    assert count.config == {"count.window": 60}
    assert compiled.component_classes == {"word_spout": WordSpout, "count_bolt": WordCountBolt}


def test_name_defaults_to_the_class_name():
    assert compile_topology(WordCount).plan.name == "WordCount"


def test_topology_config_comes_from_the_class_unless_a_merged_config_is_given():
    class Configured(Topology):
        config = {"topology.message.timeout.secs": 5}
        word_spout = WordSpout.spec()

    assert compile_topology(Configured).plan.config == {"topology.message.timeout.secs": 5}
    merged = {"topology.message.timeout.secs": 9, "topology.debug": True}
    assert compile_topology(Configured, config=merged).plan.config == merged


class PerEnvironment(Topology):
    word_spout = WordSpout.spec()
    count_bolt = WordCountBolt.spec(inputs=[word_spout], par={"prod": 8, "dev": 1})


def test_per_environment_parallelism_is_resolved_with_env():
    assert (
        compile_topology(PerEnvironment, env="prod").plan.components["count_bolt"].parallelism == 8
    )
    assert (
        compile_topology(PerEnvironment, env="dev").plan.components["count_bolt"].parallelism == 1
    )


def test_missing_environment_in_par_dict_names_component_and_env():
    with pytest.raises(errors.ParallelismEnvironmentError) as caught:
        compile_topology(PerEnvironment, env="staging")
    message = str(caught.value)
    assert "'count_bolt'" in message and "'staging'" in message and "'prod'" in message


def test_per_environment_parallelism_without_env_asks_for_one():
    with pytest.raises(errors.ParallelismEnvironmentError, match="no environment was chosen"):
        compile_topology(PerEnvironment)


def test_every_streamparse_grouping_maps_to_its_plan_name():
    class Groupings(Topology):
        source = SentenceSpout.spec()
        g_global = SinkBolt.spec(inputs={source: Grouping.GLOBAL})
        g_all = SinkBolt.spec(inputs={source: Grouping.ALL})
        g_none = SinkBolt.spec(inputs={source: Grouping.NONE})
        g_local = SinkBolt.spec(inputs={source: Grouping.LOCAL_OR_SHUFFLE})
        g_shuffle = SinkBolt.spec(inputs=[source])
        g_fields = SinkBolt.spec(inputs={source["errors"]: Grouping.fields("error")})
        g_direct = SinkBolt.spec(inputs={source["targeted"]: Grouping.DIRECT})

    plan = compile_topology(Groupings).plan
    found = {name: (c.inputs[0].stream, c.inputs[0].grouping) for name, c in plan.bolts.items()}
    assert found == {
        "g_global": ("default", "global"),
        "g_all": ("default", "all"),
        "g_none": ("default", "none"),
        "g_local": ("default", "local_or_shuffle"),
        "g_shuffle": ("default", "shuffle"),
        "g_fields": ("errors", "fields"),
        "g_direct": ("targeted", "direct"),
    }
    assert plan.components["source"].outputs["targeted"].direct


def test_shell_components_keep_command_and_script_and_have_no_class():
    class WithShell(Topology):
        word_spout = WordSpout.spec()
        splitter = ShellBolt.spec(
            command="node", script="splitter.js", inputs=[word_spout], outputs=["part"], par=3
        )

    compiled = compile_topology(WithShell)
    splitter = compiled.plan.components["splitter"]
    assert (splitter.shell, splitter.python_class, splitter.parallelism) == (
        ("node", "splitter.js"),
        None,
        3,
    )
    assert "splitter" not in compiled.component_classes


def test_component_class_defined_in_a_function_is_recorded_and_kept_in_process():
    class LocalSpout(Spout):
        outputs = ["n"]

        def next_tuple(self):
            pass

    class Local(Topology):
        numbers = LocalSpout.spec()

    compiled = compile_topology(Local)
    assert compiled.plan.components["numbers"].python_class.endswith("<locals>.LocalSpout")
    assert compiled.component_classes["numbers"] is LocalSpout


def test_java_components_are_rejected_by_name():
    class WithJava(Topology):
        word_spout = WordSpout.spec()
        counter = JavaBolt.spec(
            full_class_name="com.example.Counter", args_list=[], inputs=[word_spout], outputs=["n"]
        )

    with pytest.raises(errors.UnsupportedComponentError) as caught:
        compile_topology(WithJava)
    assert "'counter'" in str(caught.value) and "com.example.Counter" in str(caught.value)


def test_java_custom_groupings_are_rejected_by_name():
    class WithCustom(Topology):
        word_spout = WordSpout.spec()
        counter = WordCountBolt.spec(
            inputs={word_spout: Grouping.custom_object("com.example.ByLength", [])}
        )

    with pytest.raises(errors.UnsupportedGroupingError) as caught:
        compile_topology(WithCustom)
    assert "'counter'" in str(caught.value) and "com.example.ByLength" in str(caught.value)


def test_compile_rejects_a_cycle_on_default_streams_that_streamparse_accepts():
    class Loop(Topology):
        word_spout = WordSpout.spec()
        first = WordCountBolt.spec(
            inputs=[word_spout, GlobalStreamId(componentId="second", streamId="default")]
        )
        second = WordCountBolt.spec(inputs=[first])

    with pytest.raises(errors.CycleError) as caught:
        compile_topology(Loop)
    assert caught.value.cycle == ("first", "second", "first")


class FeedbackBolt(Bolt):
    outputs = [Stream(fields=["word", "count"]), Stream(fields=["word"], name="feedback")]

    def process(self, tup):
        pass


def test_compile_accepts_a_feedback_loop_through_a_named_stream():
    class Feedback(Topology):
        word_spout = WordSpout.spec()
        first = WordCountBolt.spec(
            inputs=[word_spout, GlobalStreamId(componentId="second", streamId="feedback")]
        )
        second = FeedbackBolt.spec(inputs=[first])

    plan = compile_topology(Feedback).plan
    assert [c.name for c, _ in plan.consumers("second", "feedback")] == ["first"]


def test_compile_rejects_reserved_names_that_streamparse_accepts():
    class Reserved(Topology):
        word_spout = WordSpout.spec(name="__system")

    with pytest.raises(errors.ReservedNameError, match="'__system'"):
        compile_topology(Reserved)


def test_compile_rejects_direct_grouping_on_a_regular_stream():
    class Direct(Topology):
        word_spout = WordSpout.spec()
        counter = WordCountBolt.spec(inputs={word_spout: Grouping.DIRECT})

    with pytest.raises(errors.DirectGroupingError, match="'counter'.*'default'"):
        compile_topology(Direct)


def test_something_that_is_not_a_topology_is_a_type_error():
    with pytest.raises(TypeError, match="not a Topology class"):
        compile_topology(WordSpout)


def test_compat_storm_api_topology_compiles_like_streamparse():
    from compat.storm_api.bolt import Bolt as CompatBolt
    from compat.storm_api.dsl import Grouping as CompatGrouping
    from compat.storm_api.dsl import Topology as CompatTopology
    from compat.storm_api.shell import ShellBolt as CompatShellBolt
    from compat.storm_api.spout import Spout as CompatSpout

    class CompatWordSpout(CompatSpout):
        outputs = ["word"]

        def next_tuple(self):
            pass

    class CompatCountBolt(CompatBolt):
        outputs = ["word", "count"]

        def process(self, tup):
            pass

    class CompatWordCount(CompatTopology):
        word_spout = CompatWordSpout.spec()
        count_bolt = CompatCountBolt.spec(inputs={word_spout: CompatGrouping.fields("word")}, par=2)
        shell = CompatShellBolt.spec(
            command="node", script="x.js", inputs=[word_spout], outputs=["a"]
        )

    ours = compile_topology(CompatWordCount, name="wordcount").plan
    theirs = compile_topology(WordCount, name="wordcount").plan

    assert [(c.kind, c.parallelism) for c in ours.components.values()] == [
        ("spout", 1),
        ("bolt", 2),
        ("bolt", 1),
    ]
    assert ours.components["count_bolt"].inputs == theirs.components["count_bolt"].inputs
    assert ours.components["shell"].shell == ("node", "x.js")
    assert ours.components["shell"].python_class is None
