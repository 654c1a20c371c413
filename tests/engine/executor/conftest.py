"""A launch spec and a stored two-container packing plan, with stand-ins for the engine's
processes (engine.common.process.standin), so the executor can be tested on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.common.launch import LaunchSpec, StateManagerSpec, Submission
from engine.packing import ContainerPlan, InstancePlan, PackingPlan, Resource
from engine.statemgr import LocalFileSystemStateManager


def two_container_plan() -> PackingPlan:
    r = Resource()
    return PackingPlan(
        "wc-pack",
        [
            ContainerPlan(
                1, [InstancePlan("word-spout", 1, 0, r), InstancePlan("count-bolt", 3, 0, r)]
            ),
            ContainerPlan(
                2, [InstancePlan("word-spout", 2, 1, r), InstancePlan("count-bolt", 4, 1, r)]
            ),
        ],
    )


@pytest.fixture
def plan() -> PackingPlan:
    return two_container_plan()


@pytest.fixture
def launch_spec(tmp_path: Path, monkeypatch) -> LaunchSpec:
    monkeypatch.setenv("HERON_MODULE_OVERRIDES", "*=engine.common.process.standin")
    spec = LaunchSpec(topology_name="wc", topology_id="wc-0123456789ab",
                      working_dir=str(tmp_path / "topologies" / "wc"),
                      submission=Submission(project=str(tmp_path), name="wc"),
                      state=StateManagerSpec(kind="local", root=str(tmp_path / "state")),
                      restart_backoff_initial_ms=200)
    spec.save()
    sm = LocalFileSystemStateManager(spec.state.root)
    sm.create("packingplans", "wc", two_container_plan().to_proto())
    sm.close()
    return spec
