"""Our DSL objects and streamparse's mix, in both directions (issue 38, defect 9).

A topology file keeps ``from streamparse import Topology, Grouping, Bolt`` and uses the
shipped connectors (``compat.connectors.FileSpout.spec()``, ``FileSink.spec(...)``); a
``compat.storm_api`` topology hosts real streamparse bolts. Either way the topology must
build, keep streamparse's checks, and compile to the plan its wiring says.
"""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import textwrap
from itertools import product
from pathlib import Path

import pytest
import streamparse as sp
from streamparse.thrift import GlobalStreamId as SpGlobalStreamId

import compat.storm_api as ours
from compat.connectors import FileSink, FileSpout
from compat.storm_api.dsl import InvalidTopologyKey, InvalidTopologyValue
from engine.common.plan.compiler import compile_topology
from engine.common.plan.constants import STATEFUL_CONFIG_KEY

REPO = Path(__file__).resolve().parents[4]
DSLS = {"streamparse": sp, "ours": ours}


class SpSplit(sp.Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in tup.values[0].split():
            self.emit([word])


class SpCount(ours.StatefulComponent, sp.Bolt):
    """A streamparse bolt mixing our StatefulComponent, as docs/stateful.md shows."""

    outputs = ["word", "count"]

    def init_state(self, stateful_state):
        self.counts = stateful_state.keyed()

    def process(self, tup):
        word = tup.values[0]
        self.counts[word] = self.counts.get(word, 0) + 1
        self.emit([word, self.counts[word]])


class OurSplit(ours.Bolt):
    outputs = ["word"]

    def process(self, tup):
        pass


class SpErrors(sp.Bolt):
    outputs = ["word", ours.Stream(["reason"], name="errors")]

    def process(self, tup):
        pass


class OurErrors(ours.Bolt):
    outputs = ["word", sp.Stream(["reason"], name="errors")]

    def process(self, tup):
        pass


class SpDirect(sp.Spout):
    outputs = [sp.Stream(["n"], direct=True)]

    def next_tuple(self):
        pass


def inputs_of(topology: type) -> dict[str, list[tuple]]:
    """Every bolt's subscriptions in the compiled plan: (source, stream, grouping, fields)."""
    plan = compile_topology(topology).plan
    return {name: sorted((i.source, i.stream, i.grouping, i.fields) for i in c.inputs)
            for name, c in plan.components.items() if c.kind == "bolt"}


def test_streamparse_topology_takes_the_shipped_connectors():
    """The defect: this class statement raised streamparse's 'If inputs is a dict...'."""

    class Counting(sp.Topology):
        lines = FileSpout.spec()
        split = SpSplit.spec(inputs={lines: sp.Grouping.SHUFFLE})
        count = SpCount.spec(inputs={split: sp.Grouping.fields("word")}, par=2)
        sink = FileSink.spec(inputs={count: sp.Grouping.fields("word")}, par=2)

    assert [s.name for s in Counting.specs] == ["lines", "split", "count", "sink"]
    assert set(Counting.thrift_spouts) == {"lines"}
    assert set(Counting.thrift_bolts) == {"split", "count", "sink"}
    plan = compile_topology(Counting).plan
    components = plan.components
    assert components["lines"].kind == "spout"
    assert components["lines"].python_class == "compat.connectors.files:FileSpout"
    assert components["sink"].python_class == "compat.connectors.files:FileSink"
    assert components["count"].python_class == f"{__name__}:SpCount"
    assert (components["count"].parallelism, components["sink"].parallelism) == (2, 2)
    for stateful in ("lines", "count", "sink"):
        assert components[stateful].config.get(STATEFUL_CONFIG_KEY) is True
    assert STATEFUL_CONFIG_KEY not in components["split"].config
    assert inputs_of(Counting) == {
        "split": [("lines", "default", "shuffle", ())],
        "count": [("split", "default", "fields", ("word",))],
        "sink": [("count", "default", "fields", ("word",))],
    }


def test_our_topology_takes_streamparse_bolts():
    """The reverse: a compat.storm_api Topology with streamparse bolts' specs (and
    streamparse's Grouping) between our connectors."""

    class Counting(ours.Topology):
        lines = FileSpout.spec()
        split = SpSplit.spec(inputs=[lines])
        count = SpCount.spec(inputs={split: sp.Grouping.fields("word")}, par=2)
        sink = FileSink.spec(inputs={count: sp.Grouping.fields("word")})

    assert [s.name for s in Counting.specs] == ["lines", "split", "count", "sink"]
    assert set(Counting.thrift_bolts) == {"split", "count", "sink"}
    assert inputs_of(Counting) == {
        "split": [("lines", "default", "shuffle", ())],
        "count": [("split", "default", "fields", ("word",))],
        "sink": [("count", "default", "fields", ("word",))],
    }
    assert compile_topology(Counting).plan.components["count"].config[STATEFUL_CONFIG_KEY]


@pytest.mark.parametrize("topology_dsl,grouping_dsl,bolt_dsl",
                         list(product(DSLS, DSLS, DSLS)))
def test_every_combination_of_topology_grouping_and_bolt(topology_dsl, grouping_dsl,
                                                         bolt_dsl):
    topology_base = DSLS[topology_dsl].Topology
    grouping = DSLS[grouping_dsl].Grouping
    split_cls = SpSplit if bolt_dsl == "streamparse" else OurSplit

    class Mixed(topology_base):
        lines = FileSpout.spec()
        split = split_cls.spec(inputs={lines: grouping.LOCAL_OR_SHUFFLE}, par=2)
        sink = FileSink.spec(inputs={split: grouping.fields("word")}, par=3)

    assert inputs_of(Mixed) == {
        "split": [("lines", "default", "local_or_shuffle", ())],
        "sink": [("split", "default", "fields", ("word",))],
    }
    plan = compile_topology(Mixed).plan
    assert plan.components["sink"].parallelism == 3


@pytest.mark.parametrize("topology_dsl", DSLS)
def test_named_streams_and_stream_objects_cross(topology_dsl):
    """``spec["stream"]`` of one DSL in the other's spec, in list and dict form; our
    ``Stream`` in a streamparse bolt's outputs and streamparse's in ours."""

    class Streams(DSLS[topology_dsl].Topology):
        lines = FileSpout.spec()
        theirs = SpErrors.spec(inputs=[lines])
        mine = OurErrors.spec(inputs={theirs["errors"]: ours.Grouping.fields("reason"),
                                      theirs: sp.Grouping.GLOBAL})
        again = SpErrors.spec(inputs=[mine["errors"], mine])
        sink = FileSink.spec(inputs={again["errors"]: sp.Grouping.ALL,
                                     mine["errors"]: ours.Grouping.NONE})

    assert inputs_of(Streams) == {
        "theirs": [("lines", "default", "shuffle", ())],
        "mine": [("theirs", "default", "global", ()),
                 ("theirs", "errors", "fields", ("reason",))],
        "again": [("mine", "default", "shuffle", ()), ("mine", "errors", "shuffle", ())],
        "sink": [("again", "errors", "all", ()), ("mine", "errors", "none", ())],
    }
    outputs = {s.name: {k: list(v.output_fields) for k, v in s.outputs.items()}
               for s in Streams.specs}
    assert outputs["theirs"] == outputs["mine"] == {"default": ["word"], "errors": ["reason"]}


@pytest.mark.parametrize("topology_dsl", DSLS)
def test_a_direct_stream_of_a_streamparse_spout_gets_direct_in_our_spec(topology_dsl):
    class Direct(DSLS[topology_dsl].Topology):
        numbers = SpDirect.spec()
        sink = FileSink.spec(inputs=[numbers])

    assert inputs_of(Direct) == {"sink": [("numbers", "default", "direct", ())]}


@pytest.mark.parametrize("kind", ["SHUFFLE", "GLOBAL", "DIRECT", "ALL", "NONE",
                                  "LOCAL_OR_SHUFFLE"])
def test_groupings_are_equal_across_the_dsls(kind):
    mine, theirs = getattr(ours.Grouping, kind), getattr(sp.Grouping, kind)
    assert mine == theirs and theirs == mine
    assert repr(mine) == repr(theirs)
    assert isinstance(mine, sp.dsl.stream.storm_thrift.Grouping)
    assert ours.Grouping.fields("a", "b") == sp.Grouping.fields(["a", "b"])
    assert sp.Grouping.fields("a") == ours.Grouping.fields("a")


def test_stream_ids_are_streamparses_too_and_hash_alike():
    spec = FileSpout.spec(name="lines")
    key = spec["default"]
    assert isinstance(key, SpGlobalStreamId)
    theirs = SpGlobalStreamId(componentId="lines", streamId="default")
    assert key == theirs and theirs == key and hash(key) == hash(theirs)
    assert {theirs: 1}[key] == 1


def test_a_mixed_topology_gives_the_same_flux_in_both_dsls():
    def build(dsl):
        class Mixed(dsl.Topology):
            lines = FileSpout.spec(par=2, config={"heron.connectors.file.path": "in/*.txt"})
            split = SpSplit.spec(inputs={lines: ours.Grouping.SHUFFLE})
            count = SpCount.spec(inputs={split: sp.Grouping.fields("word")}, par=2)
            sink = FileSink.spec(inputs={count: ours.Grouping.fields("word")})
        return Mixed

    assert build(sp).to_flux_dict("mixed") == build(ours).to_flux_dict("mixed")


def test_mistakes_are_still_caught_in_mixed_topologies():
    with pytest.raises(ValueError, match="nope"):

        class TheirsBadField(sp.Topology):
            lines = FileSpout.spec()
            sink = FileSink.spec(inputs={lines: sp.Grouping.fields("nope")})

    with pytest.raises(InvalidTopologyValue, match="'nope' is not an output field"):

        class OursBadField(ours.Topology):
            lines = FileSpout.spec()
            split = SpSplit.spec(inputs={lines: sp.Grouping.fields("nope")})

    elsewhere = FileSpout.spec(name="elsewhere")
    with pytest.raises(InvalidTopologyKey, match="not a component of this topology"):

        class OursMissingSource(ours.Topology):
            lines = FileSpout.spec()
            split = SpSplit.spec(inputs=[elsewhere])

    with pytest.raises(TypeError, match="Grouping"):
        FileSink.spec(inputs={FileSpout.spec(): "shuffle"})


def test_constants_made_while_streamparse_was_not_loaded_are_made_again(monkeypatch):
    """Grouping constants are made on access: one read before streamparse was imported is
    plain, and streamparse's DSL still gets one of its own groupings after."""
    for module in ("streamparse.dsl.stream", "streamparse.thrift"):
        monkeypatch.setitem(sys.modules, module, None)  # looks unloaded to the DSL
    plain = ours.Grouping.SHUFFLE
    assert not isinstance(plain, sp.dsl.stream.storm_thrift.Grouping)
    monkeypatch.undo()
    mixed = ours.Grouping.SHUFFLE
    assert isinstance(mixed, sp.dsl.stream.storm_thrift.Grouping) and mixed == plain
    assert ours.Grouping.SHUFFLE is mixed  # one shared instance per kind
    spec = SpSplit.spec(inputs={FileSpout.spec(): mixed})
    assert list(spec.inputs.values()) == [mixed]


def test_mixed_objects_pickle_and_copy_as_ours():
    spec = FileSink.spec(inputs={FileSpout.spec(name="lines"): ours.Grouping.fields("line")})
    for value in (spec, ours.Grouping.fields("word"), ours.Grouping.SHUFFLE,
                  ours.Stream(["a"], name="s"), FileSpout.spec(name="lines")["default"]):
        for again in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value)):
            assert type(again) is type(value)
            assert vars(again).keys() == vars(value).keys()
    assert pickle.loads(pickle.dumps(ours.Grouping.fields("word"))) == sp.Grouping.fields("word")
    again = pickle.loads(pickle.dumps(spec))
    assert (again.name, again.par, again.config) == (spec.name, spec.par, spec.config)
    assert isinstance(again, sp.dsl.bolt.ShellBoltSpec)


def test_compat_needs_no_streamparse(tmp_path):
    """Importing compat loads no streamparse, and with streamparse unimportable the DSL
    and the connectors still build a topology, of plain classes."""
    script = textwrap.dedent("""
        import sys
        import compat.storm_api, compat.connectors
        assert not [m for m in sys.modules if m.startswith(("streamparse", "thriftpy2"))]
        sys.modules["streamparse"] = None  # import streamparse now fails
        from compat.connectors import FileSink, FileSpout
        from compat.storm_api import Bolt, Grouping, Topology

        class Split(Bolt):
            outputs = ["word"]
            def process(self, tup):
                pass

        class Counting(Topology):
            lines = FileSpout.spec()
            split = Split.spec(inputs={lines: Grouping.SHUFFLE})
            sink = FileSink.spec(inputs={split: Grouping.fields("word")})

        for spec in Counting.specs:
            assert all(c.__module__.startswith(("compat.", "builtins"))
                       for c in type(spec).__mro__), type(spec).__mro__
        assert type(Grouping.SHUFFLE).__mro__[-2].__module__ == "compat.storm_api.thrift"
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
