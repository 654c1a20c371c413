"""A streaming plan as a real ``compat.storm_api`` Topology class, for either engine.

Each planned node becomes a subclass of one of the generic components whose class
attributes carry that node's plan and the run's settings; the Topology class is built
by the DSL's own metaclass, so it is checked and compiled exactly like a hand-written
one (``heron run`` lists its planned components like any topology's).

Two ways to get one:

* ``plan_topology(job, options, ...)`` in a project's ``topologies/<name>.py``::

      from compat.summingbird.platforms.streaming import plan_topology
      from jobs.wordcount import job          # the project's src/ is on sys.path
      WordCount = plan_topology(job(), name="wordcount")

  Every heron instance imports that file and plans the job again; planning is
  deterministic, so they all run the plan the Topology Master holds. Functions are
  imported by name there, as in any streamparse project.
* ``run_streaming`` writes the plan with cloudpickle (job code that other processes
  could not import travels by value) next to a generated topology file calling
  ``load_plan_topology(__file__)``, so instances rebuild it byte for byte.

The components are native only: their specs carry no shell command, so ``--multilang``
runs them in process like any Python component without a ``streamparse_run`` entry.
"""

from __future__ import annotations

import io
import os
import pickle
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import cloudpickle

from compat.storm_api import Grouping, Topology
from compat.storm_api.component import Component
from compat.storm_api.dsl.component import ComponentSpec, ShellBoltSpec, ShellSpoutSpec
from compat.storm_api.dsl.topology import TopologyType
from compat.storm_api.thrift import ComponentObject, GlobalStreamId
from compat.storm_api.thrift import Grouping as ThriftGrouping

from ...errors import PlanningError
from ...options import OptionsLike
from .components import (
    RunSettings,
    SummingbirdFlatMapBolt,
    SummingbirdSpout,
    SummingbirdSummerBolt,
)
from .planner import SPOUT, SUMMER, PlannedNode, StreamingPlan, plan_streaming

#: The file ``run_streaming`` writes the plan to, at the root of its generated project.
PLAN_FILE = "summingbird-plan.pkl"
_BASES = {SPOUT: SummingbirdSpout, SUMMER: SummingbirdSummerBolt}


class _NativeSpoutSpec(ShellSpoutSpec):
    """A spout spec without a shell command: the class runs in process only."""

    def __init__(self, component_cls: type[Component], name: str, par: int,
                 config: dict[str, Any]) -> None:
        ComponentSpec.__init__(self, component_cls, name=name, par=par, config=config,
                               outputs=component_cls.outputs)
        self.component_object = ComponentObject()


class _NativeBoltSpec(ShellBoltSpec):
    """A bolt spec without a shell command: the class runs in process only."""

    def __init__(self, component_cls: type[Component], name: str,
                 inputs: dict[GlobalStreamId, ThriftGrouping], par: int,
                 config: dict[str, Any]) -> None:
        ComponentSpec.__init__(self, component_cls, name=name, inputs=inputs, par=par,
                               config=config, outputs=component_cls.outputs)
        self.component_object = ComponentObject()


def _class_name(node: PlannedNode) -> str:
    words = [w for w in node.name.replace(".", "-").replace("_", "-").split("-") if w]
    return "Sb" + "".join(w[:1].upper() + w[1:] for w in words)


def component_class(node: PlannedNode, run: RunSettings) -> type[Component]:
    """The component class of one node: a generic component with this node's plan."""
    base = _BASES.get(node.role, SummingbirdFlatMapBolt)
    name = _class_name(node)
    return type(name, (base,), {"sb_node": node, "sb_run": run, "__module__": base.__module__,
                                "__qualname__": name})


def build_topology(plan: StreamingPlan, run: RunSettings | None = None,
                   class_name: str | None = None) -> type[Topology]:
    """The Topology class of ``plan`` (spouts and bolts in the plan's order)."""
    run = run or RunSettings()
    specs: dict[str, ComponentSpec] = {}
    body: dict[str, Any] = {"config": dict(plan.config)}
    for node in plan.nodes:
        cls = component_class(node, run)
        config = dict(node.config)
        if node.role == SPOUT:
            spec: ComponentSpec = _NativeSpoutSpec(cls, node.name, node.parallelism, config)
        else:
            grouping = Grouping.fields("key") if node.role == SUMMER else Grouping.SHUFFLE
            inputs: dict[GlobalStreamId, ThriftGrouping] = {
                specs[edge.source]["default"]: grouping for edge in node.inputs}
            spec = _NativeBoltSpec(cls, node.name, inputs, node.parallelism, config)
        specs[node.name] = spec
        body[f"c{len(specs)}_{node.name.replace('-', '_').replace('.', '_')}"] = spec
    name = class_name or _class_name_of(plan.name)
    # the metaclass makes a Topology subclass, which its own type does not say
    return cast("type[Topology]", TopologyType(name, (Topology,), body))


def _class_name_of(plan_name: str) -> str:
    words = [w for w in plan_name.replace(".", "_").replace("-", "_").split("_") if w]
    return "".join(w[:1].upper() + w[1:] for w in words) or "Summingbird"


def plan_topology(job: Any, options: Mapping[str, OptionsLike] | None = None, *,
                  name: str | None = None, config: Mapping[str, Any] | None = None,
                  run_id: str | None = None, max_replays: int | None = None) -> type[Topology]:
    """Plan ``job`` (its tail) for the streaming platform, as a Topology class.

    For a project's topology file (see the module docstring). ``config`` is the
    topology's Storm config (``topology.message.timeout.secs``...); ``run_id`` scopes
    the summers' replay ledger (default: ``summingbird.run.id`` from the config, else the
    topology's name). Stores must be shared by processes: ``SQLiteStore`` with an
    absolute path, not ``InMemoryStore``.
    """
    plan = plan_streaming(job, options, name=name, config=config)
    run = RunSettings(run_id=run_id) if max_replays is None else \
        RunSettings(run_id=run_id, max_replays=max_replays)
    return build_topology(plan, run)


# -- plans written by run_streaming ------------------------------------------------------

def dump_plan(plan: StreamingPlan, run: RunSettings) -> bytes:
    """``(plan, run)`` with cloudpickle, job modules that workers cannot import by value."""
    registered = []
    already = set(cloudpickle.list_registry_pickle_by_value())
    try:
        for module_name in sorted(plan.modules_by_value - already):
            module = sys.modules.get(module_name)
            if module is not None:
                cloudpickle.register_pickle_by_value(module)
                registered.append(module)
        buffer = io.BytesIO()
        try:
            cloudpickle.dump((plan, run), buffer, protocol=pickle.DEFAULT_PROTOCOL)
        except Exception as exc:
            raise PlanningError(f"the streaming plan of {plan.name!r} cannot be pickled for the "
                                f"engine's processes: {type(exc).__name__}: {exc}") from exc
        return buffer.getvalue()
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)


def load_plan(data: bytes) -> tuple[StreamingPlan, RunSettings]:
    """What ``dump_plan`` wrote."""
    plan, run = pickle.loads(data)
    return plan, run


def load_plan_topology(topology_file: str | os.PathLike[str]) -> type[Topology]:
    """The Topology of the plan ``run_streaming`` wrote beside a generated topology file."""
    project = Path(topology_file).resolve().parent.parent
    path = project / PLAN_FILE
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PlanningError(f"{path}: cannot read the Summingbird plan: {exc.strerror}") from None
    plan, run = load_plan(data)
    return build_topology(plan, run)


TOPOLOGY_TEMPLATE = '''"""Generated by compat.summingbird (run_streaming): the planned topology of a job."""

from compat.summingbird.platforms.streaming.topology import load_plan_topology

{class_name} = load_plan_topology(__file__)
'''  # noqa: E501


def write_project(directory: str | os.PathLike[str], module: str, plan_name: str,
                  data: bytes) -> Path:
    """A streamparse-style project: ``topologies/<module>.py`` and the plan ``dump_plan``
    wrote (``data``), which that file loads."""
    root = Path(directory)
    (root / "topologies").mkdir(parents=True, exist_ok=True)
    (root / PLAN_FILE).write_bytes(data)
    (root / "topologies" / f"{module}.py").write_text(
        TOPOLOGY_TEMPLATE.format(class_name=_class_name_of(plan_name)), encoding="utf-8")
    return root
