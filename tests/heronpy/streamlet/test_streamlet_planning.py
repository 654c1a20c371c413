"""Planning a streamlet graph into heronpy components (names, classes, parallelism,
groupings, outputs, config), the Config and Runner mapping, and the operators' bolts run
in-process with a recording delegate: no engine started."""

from __future__ import annotations

import datetime
from collections import namedtuple

import pytest

from heronpy.api import api_constants
from heronpy.api.stream import Grouping
from heronpy.api.topology import capture_submissions
from heronpy.connectors.mock.arraylooper import ArrayLooper
from heronpy.connectors.textfiles.textfilesgenerator import TextFileGenerator
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.impl.joinbolt import JoinBolt
from heronpy.streamlet.impl.repartitionbolt import RepartitionCustomGrouping
from heronpy.streamlet.impl.streamletboltbase import pack_object
from heronpy.streamlet.keyedwindow import KeyedWindow
from heronpy.streamlet.resources import Resources
from heronpy.streamlet.runner import Runner
from heronpy.streamlet.window import Window
from heronpy.streamlet.windowconfig import WindowConfig

KEY = Grouping.fields("key")


def _plan(builder: Builder) -> dict:
    """{name: (class name, parallelism, {input: grouping}, {stream: fields})}."""
    bldr = builder.build()
    return {name: (spec.component_cls.__name__, spec.parallelism,
                   {str(k): v for k, v in (spec.inputs or {}).items()},
                   spec._sanitize_outputs())
            for name, spec in bldr._specs.items()}


def test_word_count_graph_plans_a_keyed_reduction_on_a_fields_grouping_of_the_key():
    builder = Builder()
    builder.new_source(ArrayLooper(["a b", "c"])).set_num_partitions(2) \
        .flat_map(str.split).map(lambda w: (w, 1)) \
        .reduce_by_key_and_window(WindowConfig.create_sliding_window(10, 2), lambda x, y: x + y) \
        .log()
    out = {"output": ["output"]}
    assert _plan(builder) == {
        "generator-1": ("GeneratorSpout", 2, {}, out),
        "flatmap-1": ("FlatMapBolt", 2, {"generator-1:output": Grouping.SHUFFLE}, out),
        # the reduction's parent emits the key as a second field
        "map-1": ("MapBolt", 2, {"flatmap-1:output": Grouping.SHUFFLE},
                  {"output": ["output", "key"]}),
        "reducebykeyandwindow-1": ("ReduceByKeyAndWindowBolt", 1, {"map-1:output": KEY}, out),
        "log-1": ("LogBolt", 1, {"reducebykeyandwindow-1:output": Grouping.SHUFFLE}, out)}


def test_join_union_repartition_and_reduce_by_window_plan_once_both_parents_are_built():
    builder = Builder()
    left = builder.new_source(lambda: ("k", 1)).set_name("left")
    right = builder.new_source(ArrayLooper([("k", 2)])).set_name("right")
    left.join(right, WindowConfig.create_tumbling_window(3), max).set_name("j") \
        .set_num_partitions(2)
    left.union(right).repartition(4).reduce_by_window(
        WindowConfig.create_tumbling_window(datetime.timedelta(seconds=2)), max)
    bldr = builder.build()
    plan = _plan(builder)
    assert plan["left"][:2] == ("SupplierSpout", 1) and plan["right"][:2] == ("GeneratorSpout", 1)
    assert plan["left"][3] == plan["right"][3] == {"output": ["output", "key"]}
    assert plan["j"][:3] == ("JoinBolt", 2, {"left:output": KEY, "right:output": KEY})
    assert plan["union-1"][2] == {"left:output": Grouping.SHUFFLE,
                                  "right:output": Grouping.SHUFFLE}
    assert plan["repartition-1"][:2] == ("RepartitionBolt", 4)
    assert plan["reducebywindow-1"][:3] == ("ReduceByWindowBolt", 1,
                                            {"repartition-1:output": Grouping.LOWEST})
    join_config = bldr._specs["j"].custom_config
    assert join_config[JoinBolt.JOINEDCOMPONENT] == "right"
    assert (join_config[JoinBolt.WINDOWDURATION], join_config[JoinBolt.SLIDEINTERVAL]) == (3, 3)


def test_stage_names_default_per_operator_and_duplicates_are_refused():
    builder = Builder()
    source = builder.new_source(lambda: 1)
    source.map(abs)
    source.map(abs).set_name("map-1")
    with pytest.raises(RuntimeError, match="Duplicate Names"):
        builder.build()


def test_a_streamlet_not_reachable_from_the_builders_sources_is_refused():
    builder = Builder()
    other = Builder().new_source(lambda: 1)
    builder.new_source(lambda: 2).union(other)
    with pytest.raises(RuntimeError, match="cannot be fully built"):
        builder.build()


def test_a_function_that_cannot_be_pickled_is_reported_with_its_stage():
    import threading
    lock = threading.Lock()
    builder = Builder()
    builder.new_source(lambda: 1).map(lambda x: (lock, x)).set_name("locked")
    with pytest.raises(RuntimeError, match="stage 'locked': its function .* cannot be pickled"):
        builder.build()


def test_repartition_without_a_function_shuffles_and_with_one_groups_by_it():
    builder = Builder()
    source = builder.new_source(lambda: 1)
    source.repartition(3)
    source.repartition(2, lambda value, n: value % n)
    clones = source.clone(2)
    bldr = builder.build()
    assert list(bldr._specs["repartition-1"].inputs.values()) == [Grouping.SHUFFLE]
    custom = list(bldr._specs["repartition-2"].inputs.values())[0]
    assert isinstance(custom, Grouping.CUSTOM)
    assert len(clones) == 2 and all(c.get_num_partitions() == 1 for c in clones)
    grouping = RepartitionCustomGrouping(lambda value, n: [value, value + 1])
    grouping.prepare(None, "source", "output", [9, 7, 8])
    assert grouping.choose_tasks([4]) == [8, 9]  # partitions 1 and 2 of tasks 7, 8, 9


def test_config_maps_delivery_semantics_containers_and_resources():
    config = Config({"user.key": "v"})
    for semantics, mode in ((Config.ATMOST_ONCE, "ATMOST_ONCE"),
                            (Config.ATLEAST_ONCE, "ATLEAST_ONCE"),
                            (Config.EFFECTIVELY_ONCE, "EFFECTIVELY_ONCE")):
        config.set_delivery_semantics(semantics)
        assert config._api_config[api_constants.TOPOLOGY_RELIABILITY_MODE] == mode
    config.set_num_containers(3)
    config.set_container_resources(Resources().set_cpu(2).set_ram_in_mb(512))
    assert config._api_config[api_constants.TOPOLOGY_STMGRS] == 3
    assert config._api_config[api_constants.TOPOLOGY_CONTAINER_CPU_REQUESTED] == 2.0
    assert config._api_config[api_constants.TOPOLOGY_CONTAINER_RAM_REQUESTED] == 512 * 2 ** 20
    with pytest.raises(RuntimeError, match="Unknown Topology delivery semantics"):
        config.set_delivery_semantics(7)
    with pytest.raises(RuntimeError):
        Config(["not", "a", "dict"])


def test_runner_submits_a_heronpy_topology_with_the_config_and_pickled_tuples():
    builder = Builder()
    builder.new_source(ArrayLooper([1])).map(lambda n: n + 1).log()
    config = Config()
    config.set_delivery_semantics(Config.ATLEAST_ONCE)
    with capture_submissions() as submitted:
        Runner().run("streamlet_test", config, builder)
    (topology,) = submitted
    assert topology.topology_name == "streamlet_test"
    assert topology.config["topology.reliability.mode"] == "ATLEAST_ONCE"
    assert topology.config["topology.tuple.serializer"] == "pickle"
    assert sorted(spec.name for spec in topology.specs) == ["generator-1", "log-1", "map-1"]
    with pytest.raises(RuntimeError, match="builder has to be a Builder type"):
        Runner().run("x", Config(), object())


def test_window_config_takes_seconds_or_timedeltas_in_whole_seconds():
    assert WindowConfig.create_sliding_window(10, 2)._seconds() == (10, 2)
    minute = datetime.timedelta(minutes=1)
    assert WindowConfig.create_tumbling_window(minute)._seconds() == (60, 60)
    with pytest.raises(RuntimeError, match="second resolution"):
        WindowConfig.create_tumbling_window(datetime.timedelta(seconds=1.5))
    with pytest.raises(RuntimeError, match="Slide Interval"):
        WindowConfig.create_sliding_window(2, 5)
    with pytest.raises(RuntimeError):
        Builder().new_source(42)


Tup = namedtuple("Tup", "id component stream task values")


class _Recorder:
    """A delegate that records what a bolt emits and acks."""

    def __init__(self):
        self.emitted, self.acked = [], []
        self.logger = None

    def emit(self, tup, stream="default", anchors=None, direct_task=None, need_task_ids=False):
        self.emitted.append(tup[0])

    def ack(self, tup):
        self.acked.append(tup.id)


def _join_results(join_type: int, tuples: list) -> set:
    delegate = _Recorder()
    bolt = JoinBolt(delegate=delegate)
    bolt.initialize({JoinBolt.FUNCTION: pack_object(lambda a, b: (a, b)),
                     JoinBolt.WINDOWDURATION: 1, JoinBolt.JOINTYPE: join_type,
                     JoinBolt.JOINEDCOMPONENT: "right"}, None)
    for index, (component, element) in enumerate(tuples):
        bolt.process(Tup(index, component, "output", 1, (element,)))
    bolt.process_tick(None)
    assert sorted(delegate.acked) == list(range(len(tuples)))  # a tumbling window acks all
    assert all(isinstance(kw, KeyedWindow) and isinstance(kw.window, Window)
               for kw, _ in delegate.emitted)
    return {(kw.key, result) for kw, result in delegate.emitted}


def test_join_bolt_inner_and_outer_joins_over_one_window():
    tuples = [("left", ("a", 1)), ("left", ("a", 2)), ("right", ("a", "x")),
              ("left", ("l", 3)), ("right", ("r", "y"))]
    inner = {("a", (1, "x")), ("a", (2, "x"))}
    assert _join_results(JoinBolt.INNER, tuples) == inner
    assert _join_results(JoinBolt.OUTER_LEFT, tuples) == inner | {("l", (3, None))}
    assert _join_results(JoinBolt.OUTER_RIGHT, tuples) == inner | {("r", (None, "y"))}
    assert _join_results(JoinBolt.OUTER, tuples) == \
        inner | {("l", (3, None)), ("r", (None, "y"))}


class _Context:
    def __init__(self, index, count):
        self.index, self.count = index, count

    def get_partition_index(self):
        return self.index

    def get_num_partitions(self):
        return self.count


def test_text_files_are_split_over_partitions_and_read_once(tmp_path):
    for name, text in (("a.txt", "1\n2\n"), ("b.txt", "3\n"), ("c.txt", "4\n")):
        (tmp_path / name).write_text(text)
    seen = []
    for index in range(2):
        generator = TextFileGenerator(str(tmp_path / "*.txt"))
        generator.setup(_Context(index, 2))
        lines = iter(generator.get, None)
        seen.append(list(lines))
    assert seen == [["1\n", "2\n", "4\n"], ["3\n"]]
    looper = ArrayLooper(["x", "y"])
    looper.setup(None)
    assert [looper.get() for _ in range(5)] == ["x", "y", "x", "y", "x"]


def test_a_window_bolt_saves_its_open_window_and_a_new_task_restores_it():
    from heronpy.streamlet.impl.reducebykeyandwindowbolt import ReduceByKeyAndWindowBolt
    config = {ReduceByKeyAndWindowBolt.FUNCTION: pack_object(lambda x, y: x + y),
              ReduceByKeyAndWindowBolt.WINDOWDURATION: 5}
    first, state = ReduceByKeyAndWindowBolt(delegate=_Recorder()), {}
    first.init_state(state)
    first.initialize(dict(config), None)
    for index, element in enumerate([("a", 1), ("b", 2), ("a", 3)]):
        first.process(Tup(index, "map-1", "output", 1, (element,)))
    first.pre_save(1)
    restored = ReduceByKeyAndWindowBolt(delegate=_Recorder())
    restored.init_state(state)  # what the engine hands a restarted task
    restored.initialize(dict(config), None)
    restored.process_tick(None)
    assert {(kw.key, total) for kw, total in restored.delegate.emitted} == {("a", 4), ("b", 2)}
    assert sorted(restored.delegate.acked) == [0, 1, 2]
