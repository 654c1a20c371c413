"""``union``: the elements of two streamlets in one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compat.storm_api.tuple import Tuple
from heronpy.streamlet.impl.elementbolt import ElementBolt
from heronpy.streamlet.impl.stage import Stage, StreamletNode

if TYPE_CHECKING:
    from heronpy.api.topology import TopologyBuilder


class UnionBolt(ElementBolt):
    """Passes each element on."""

    FUNCTION = None

    def on_element(self, element: Any, tup: Tuple) -> None:
        self.emit_element(element, tup)


class UnionStage(Stage):
    """Subscribes to both parents (shuffle); partitions: the left parent's."""

    def __init__(self, left: StreamletNode, right: StreamletNode) -> None:
        if not isinstance(left, StreamletNode):
            raise RuntimeError("Left of Union Streamlet has to be a Streamlet")
        if not isinstance(right, StreamletNode):
            raise RuntimeError("Right of Union Streamlet has to be a Streamlet")
        self._left = left
        self._right = right
        self.num_partitions = left.get_num_partitions()

    def build(self, node: StreamletNode, builder: TopologyBuilder,
              stage_names: set[str]) -> bool:
        if not (self._left._built and self._right._built):
            return False
        inputs = {**self._left._input_of(), **self._right._input_of()}
        return node._add_bolt_stage(builder, stage_names, "union", UnionBolt, inputs)
