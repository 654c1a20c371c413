"""engine.common.plan.preflight: a component class's own check runs with the config its tasks
will get (the component's over the topology's), and a ValueError from it becomes one
PlanningError naming the component."""

from __future__ import annotations

import pytest

from compat.storm_api import Bolt, Spout, Topology
from engine.common.plan.compiler import compile_topology
from engine.common.plan.errors import PlanningError
from engine.common.plan.preflight import preflight

SEEN: list[tuple[str, dict]] = []


class CheckedSpout(Spout):
    outputs = ["n"]

    @classmethod
    def preflight(cls, name: str, conf: dict) -> None:
        SEEN.append((name, conf))
        if conf.get("broken"):
            raise ValueError(f"setting 'broken' is {conf['broken']!r}")

    def next_tuple(self):
        pass


class Plain(Bolt):
    def process(self, tup):
        pass


class Checked(Topology):
    numbers = CheckedSpout.spec(config={"own": 1})
    sink = Plain.spec(inputs=[numbers])


def test_the_check_gets_the_merged_config_and_other_components_are_left_alone():
    SEEN.clear()
    preflight(compile_topology(Checked, config={"own": 0, "shared": 2}))
    assert SEEN == [("numbers", {"own": 1, "shared": 2})]


def test_a_failed_check_names_the_component():
    with pytest.raises(PlanningError, match=r"^numbers: setting 'broken' is True$"):
        preflight(compile_topology(Checked, config={"broken": True}))
