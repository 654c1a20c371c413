"""``reduce_by_key_and_window``: for each window, each key's values reduced to one
``(KeyedWindow(key, Window), result)``; elements are ``(key, value)`` pairs routed by key
(fields grouping), so each key is reduced in one task."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heronpy.streamlet.impl.stage import Stage, StreamletNode, check_callable, check_streamlet
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


class ReduceByKeyAndWindowBolt(StreamletWindowBolt):
    """Emits one ``(KeyedWindow, result)`` per key seen in the window."""

    def processWindow(self, window_config: Any, tuples: list[Any]) -> None:  # noqa: N802
        results: dict[Any, list[Any]] = {}
        for key, value, _ in pairs(tuples, "ReduceByKeyAndWindow"):
            entry = results.get(hashable(key))
            if entry is None:
                results[hashable(key)] = [key, value]
            else:
                entry[1] = self.function(entry[1], value)
        window = Window(window_config.start, window_config.end)
        for key, result in results.values():
            self.emit_output((KeyedWindow(key, window), result))


class ReduceByKeyAndWindowStage(Stage):
    """Subscribed by key; one partition unless set (as heronpy's)."""

    def __init__(self, window_config: WindowConfig, reduce_function: Any,
                 parent: StreamletNode) -> None:
        if not isinstance(window_config, WindowConfig):
            raise RuntimeError("window config has to be a WindowConfig")
        check_callable(reduce_function, "ReduceByKeyAndWindow")
        check_streamlet(parent, "ReduceByKeyAndWindow")
        self._window_config = window_config
        self._reduce_function = reduce_function
        self._parent = parent

    def keyed_parents(self) -> list[StreamletNode]:
        return [self._parent]

    def build(self, node: StreamletNode, builder: TopologyBuilder,
              stage_names: set[str]) -> bool:
        duration, slide = self._window_config._seconds()
        return node._add_bolt_stage(
            builder, stage_names, "reducebykeyandwindow", ReduceByKeyAndWindowBolt,
            self._parent._input_of(key_grouping()),
            {ReduceByKeyAndWindowBolt.FUNCTION: ToPack(self._reduce_function),
             WINDOWDURATION: duration, SLIDEINTERVAL: slide})
