"""A ``-o KEY=VALUE`` that a component's own config overrides is said at load time: the
component's config wins over the topology's (Storm's order), so ``-o
heron.connectors.file.batch.lines=abc`` against a FileSpout that sets the key did nothing,
silently."""

from __future__ import annotations

from compat.storm_api import Bolt, Grouping, Spout, Topology
from engine.common.plan import compile_topology
from engine.common.submission import overridden_options


class Lines(Spout):
    outputs = ["line"]

    def next_tuple(self):
        pass


class Count(Bolt):
    outputs = ["word", "count"]

    def process(self, tup):
        pass


class Configured(Topology):
    lines = Lines.spec(config={"heron.connectors.file.batch.lines": 100})
    count = Count.spec(inputs={lines: Grouping.SHUFFLE})


def test_an_option_a_component_overrides_is_noted_naming_both_values():
    plan = compile_topology(Configured, config={"heron.connectors.file.batch.lines": 5}).plan
    notes = overridden_options({"heron.connectors.file.batch.lines": 5}, plan)
    assert len(notes) == 1
    assert "-o heron.connectors.file.batch.lines=5 does not reach component 'lines'" in notes[0]
    assert "its own config sets 100" in notes[0]


def test_options_that_reach_every_component_say_nothing():
    plan = compile_topology(Configured).plan
    assert overridden_options({"heron.connectors.file.batch.lines": 100,
                               "topology.message.timeout.secs": 9}, plan) == []
