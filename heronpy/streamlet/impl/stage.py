"""A streamlet's place in the graph and how a stage of it is planned, below the operators.

A streamlet is two things: a node of the graph ``Builder`` keeps (its name, partitions,
children, and the planning of a spout or bolt named after it), and what it computes (a
``Stage``: map, join, a generator source...). ``Streamlet`` (heronpy.streamlet.streamlet)
adds the operators, each of which makes a child streamlet around one of the stages in
this folder. The stages know their parents only as the nodes defined here, so the
operators sit above the stages and the stages never import them back (no import circle).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, TypeVar

from heronpy.api.component.component_spec import GlobalStreamId
from heronpy.api.stream import Grouping
from heronpy.streamlet.impl.streamletboltbase import (
    KEYED_OUTPUT,
    OUTPUT_STREAM,
    keyed_outputs,
    packed_config,
)

if TYPE_CHECKING:
    from heronpy.api.topology import TopologyBuilder

#: a node's own type, so ``set_name`` on a ``Streamlet`` gives back a ``Streamlet``
_Node = TypeVar("_Node", bound="StreamletNode")


class Stage(ABC):
    """What one streamlet computes, and how it becomes a spout or bolt of the topology."""

    #: the partitions the streamlet starts with (a source, a window reduction: one)
    num_partitions = 1

    def keyed_parents(self) -> list[StreamletNode]:
        """The parents this stage subscribes to by key (join, reduce by key)."""
        return []

    @abstractmethod
    def build(self, node: StreamletNode, builder: TopologyBuilder,
              stage_names: set[str]) -> bool:
        """Add ``node``'s spout or bolt to ``builder``; False if a parent is not built yet."""


class StreamletNode:
    """A node of the streamlet graph: its stage, name, partitions and children."""

    def __init__(self, stage: Stage) -> None:
        self._stage = stage
        self._name: str | None = None
        self._num_partitions = 1
        self._children: list[StreamletNode] = []
        self._built = False
        self._output = OUTPUT_STREAM
        self.set_num_partitions(stage.num_partitions)

    def set_name(self: _Node, name: str) -> _Node:
        """Name the stage (its component's name)."""
        self._name = name
        return self

    def get_name(self) -> str | None:
        return self._name

    def set_num_partitions(self: _Node, num_partitions: int) -> _Node:
        """How many tasks run this stage."""
        if isinstance(num_partitions, bool) or not isinstance(num_partitions, int) \
                or num_partitions < 1:
            raise RuntimeError(f"Number of partitions has to be a positive int, given: "
                               f"{num_partitions!r}")
        self._num_partitions = num_partitions
        return self

    def get_num_partitions(self) -> int:
        return self._num_partitions

    # -- planning ----------------------------------------------------------------------------

    def _build(self, bldr: Any, stage_names: set[str]) -> None:
        """Add this stage (once its parents are in) and then its children."""
        if self._built:  # reached again through its other parent (union, join)
            return
        if self._stage.build(self, bldr, stage_names):
            self._built = True
            for child in self._children:
                child._build(bldr, stage_names)

    def _keyed_parents(self) -> list[StreamletNode]:
        return self._stage.keyed_parents()

    def _default_stage_name_calculator(self, prefix: str, existing_stage_names: set[str]) -> str:
        """``prefix-N``, the first N not taken."""
        index = 1
        while f"{prefix}-{index}" in existing_stage_names:
            index += 1
        return f"{prefix}-{index}"

    def _claim_name(self, prefix: str, stage_names: set[str]) -> str:
        if not self._name:
            self._name = self._default_stage_name_calculator(prefix, stage_names)
        if self._name in stage_names:
            raise RuntimeError(f"Duplicate Names: two stages are named {self._name!r}")
        stage_names.add(self._name)
        return self._name

    def _output_options(self, config: dict[str, Any]) -> tuple[dict[str, Any], list[Any] | None]:
        """The component config and optional outputs that make this stage emit keys when a
        child subscribes by key."""
        if any(self in child._keyed_parents() for child in self._children):
            return {**config, KEYED_OUTPUT: True}, keyed_outputs()
        return config, None

    def _input_of(self, grouping: Any = Grouping.SHUFFLE) -> dict[GlobalStreamId, Any]:
        """``inputs`` entry for a child subscribing to this stage."""
        name = self.get_name()
        assert name is not None  # built, so named (_claim_name), before any child is
        return {GlobalStreamId(name, self._output): grouping}

    def _add_bolt_stage(
        self,
        builder: Any,
        stage_names: set[str],
        prefix: str,
        bolt_cls: type,
        inputs: dict[GlobalStreamId, Any],
        config: dict[str, Any] | None = None,
    ) -> bool:
        name = self._claim_name(prefix, stage_names)
        config, outputs = self._output_options(packed_config(config or {}, name))
        builder.add_bolt(name, bolt_cls, par=self.get_num_partitions(), inputs=inputs,
                         config=config, optional_outputs=outputs)
        return True

    def _add_spout_stage(self, builder: Any, stage_names: set[str], prefix: str,
                         spout_cls: type, config: dict[str, Any]) -> bool:
        name = self._claim_name(prefix, stage_names)
        config, outputs = self._output_options(packed_config(config, name))
        builder.add_spout(name, spout_cls, par=self.get_num_partitions(), config=config,
                          optional_outputs=outputs)
        return True

    def _add_child(self, child: StreamletNode) -> StreamletNode:
        self._children.append(child)
        return child

    def _unbuild(self) -> None:
        """Forget a previous build of this stage and the stages below it."""
        self._built = False
        for child in self._children:
            child._unbuild()

    def _all_built(self) -> bool:
        return self._built and all(child._all_built() for child in self._children)


def check_callable(function: Any, what: str) -> None:
    """heronpy's check that an operator's function is callable."""
    if not callable(function):
        raise RuntimeError(f"{what} function has to be callable")


def check_streamlet(parent: Any, what: str) -> None:
    if not isinstance(parent, StreamletNode):
        raise RuntimeError(f"Parent of {what} Streamlet has to be a Streamlet")
