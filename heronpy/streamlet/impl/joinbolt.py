"""``join`` and the outer joins: ``(key, value)`` elements of two streamlets joined per
key over each window. Both sides subscribe by key (fields grouping), so a key's elements
from either side meet in one task; the right side is told apart by its component name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heronpy.streamlet.impl.stage import Stage, StreamletNode, check_callable
from heronpy.streamlet.impl.streamletboltbase import ToPack, key_grouping
from heronpy.streamlet.impl.windowbolt import (
    SLIDEINTERVAL,
    WINDOWDURATION,
    StreamletWindowBolt,
    hashable,
    pairs,
)
from heronpy.streamlet.keyedwindow import KeyedWindow
from heronpy.streamlet.window import Window
from heronpy.streamlet.windowconfig import WindowConfig

if TYPE_CHECKING:
    from heronpy.api.topology import TopologyBuilder


class JoinBolt(StreamletWindowBolt):
    """For each key in the window: every (left, right) pair, and for outer joins the
    unmatched side with None for the other."""

    OUTER_LEFT = 1
    INNER = 2
    OUTER_RIGHT = 3
    OUTER = 4

    FUNCTION = "__join_function__"
    JOINTYPE = "__join_type__"
    JOINEDCOMPONENT = "__joined_component__"

    def setup(self, config: dict[str, Any]) -> None:
        if self.JOINEDCOMPONENT not in config or self.JOINTYPE not in config:
            raise RuntimeError(f"{self.JOINEDCOMPONENT} and {self.JOINTYPE} must be "
                               "specified in the JoinBolt")
        self._joined_component = config[self.JOINEDCOMPONENT]
        self._join_type = int(config[self.JOINTYPE])

    def processWindow(self, window_config: Any, tuples: list[Any]) -> None:  # noqa: N802
        sides: dict[Any, tuple[Any, list[Any], list[Any]]] = {}
        for key, value, component in pairs(tuples, "Join"):
            entry = sides.setdefault(hashable(key), (key, [], []))
            entry[2 if component == self._joined_component else 1].append(value)
        window = Window(window_config.start, window_config.end)
        keep_left = self._join_type in (self.OUTER_LEFT, self.OUTER)
        keep_right = self._join_type in (self.OUTER_RIGHT, self.OUTER)
        for key, left, right in sides.values():
            keyed = KeyedWindow(key, window)
            if left and right:
                for left_value in left:
                    for right_value in right:
                        self.emit_output((keyed, self.function(left_value, right_value)))
            elif left and keep_left:
                for left_value in left:
                    self.emit_output((keyed, self.function(left_value, None)))
            elif right and keep_right:
                for right_value in right:
                    self.emit_output((keyed, self.function(None, right_value)))


#: Streamlet._join's kinds (1 inner, 2 outer left, 3 outer right, 4 outer) -> JoinBolt's
JOIN_TYPES = {1: JoinBolt.INNER, 2: JoinBolt.OUTER_LEFT, 3: JoinBolt.OUTER_RIGHT,
              4: JoinBolt.OUTER}


class JoinStage(Stage):
    """Built once both sides are; partitions: the left side's."""

    def __init__(self, join_type: int, window_config: WindowConfig, join_function: Any,
                 left: StreamletNode, right: StreamletNode) -> None:
        if join_type not in JOIN_TYPES.values():
            raise RuntimeError("join type has to be of one of inner, outer, left, right")
        if not isinstance(window_config, WindowConfig):
            raise RuntimeError("window config has to be of type WindowConfig")
        check_callable(join_function, "Join")
        if not isinstance(left, StreamletNode) or not isinstance(right, StreamletNode):
            raise RuntimeError("Parent of Join has to be a Streamlet")
        if left is right:
            raise RuntimeError("Join of a streamlet with itself is not supported; clone it")
        self._join_type = join_type
        self._window_config = window_config
        self._join_function = join_function
        self._left = left
        self._right = right
        self.num_partitions = left.get_num_partitions()

    def keyed_parents(self) -> list[StreamletNode]:
        return [self._left, self._right]

    def build(self, node: StreamletNode, builder: TopologyBuilder,
              stage_names: set[str]) -> bool:
        if not (self._left._built and self._right._built):
            return False
        duration, slide = self._window_config._seconds()
        inputs = {**self._left._input_of(key_grouping()), **self._right._input_of(key_grouping())}
        return node._add_bolt_stage(
            builder, stage_names, "join", JoinBolt, inputs,
            {JoinBolt.FUNCTION: ToPack(self._join_function), WINDOWDURATION: duration,
             SLIDEINTERVAL: slide, JoinBolt.JOINEDCOMPONENT: self._right.get_name(),
             JoinBolt.JOINTYPE: self._join_type})
