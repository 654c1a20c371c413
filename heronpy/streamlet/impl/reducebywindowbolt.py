"""``reduce_by_window``: each window's elements reduced to one ``(Window, result)``.

Every element goes to one task (the operator has one partition): the reduction is over the
whole streamlet's window. Empty windows emit nothing.
"""

from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING, Any

from heronpy.api.stream import Grouping
from heronpy.streamlet.impl.stage import Stage, StreamletNode, check_callable, check_streamlet
from heronpy.streamlet.impl.streamletboltbase import ToPack
from heronpy.streamlet.impl.windowbolt import SLIDEINTERVAL, WINDOWDURATION, StreamletWindowBolt
from heronpy.streamlet.window import Window
from heronpy.streamlet.windowconfig import WindowConfig

if TYPE_CHECKING:
    from heronpy.api.topology import TopologyBuilder


class ReduceByWindowBolt(StreamletWindowBolt):
    """Emits ``(Window, reduce(function, elements))`` for each non-empty window."""

    def processWindow(self, window_config: Any, tuples: list[Any]) -> None:  # noqa: N802
        if not tuples:
            return
        result = reduce(self.function, [tup.values[0] for tup in tuples])
        self.emit_output((Window(window_config.start, window_config.end), result))


class ReduceByWindowStage(Stage):
    """One partition, subscribed with LOWEST (all elements to its task)."""

    def __init__(self, window_config: WindowConfig, reduce_function: Any,
                 parent: StreamletNode) -> None:
        if not isinstance(window_config, WindowConfig):
            raise RuntimeError("window config has to be of type WindowConfig")
        check_callable(reduce_function, "ReduceByWindow")
        check_streamlet(parent, "ReduceByWindow")
        self._parent = parent
        self._window_config = window_config
        self._reduce_function = reduce_function

    def build(self, node: StreamletNode, builder: TopologyBuilder,
              stage_names: set[str]) -> bool:
        duration, slide = self._window_config._seconds()
        return node._add_bolt_stage(
            builder, stage_names, "reducebywindow", ReduceByWindowBolt,
            self._parent._input_of(Grouping.LOWEST),
            {ReduceByWindowBolt.FUNCTION: ToPack(self._reduce_function),
             WINDOWDURATION: duration, SLIDEINTERVAL: slide})
