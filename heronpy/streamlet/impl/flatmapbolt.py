"""``flat_map``: each element replaced by the elements ``function(element)`` returns."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compat.storm_api.tuple import Tuple
from heronpy.streamlet.impl.elementbolt import ElementBolt, ElementStage


class FlatMapBolt(ElementBolt):
    """Emits each item of ``function(element)`` (a non-iterable result as one element)."""

    def on_element(self, element: Any, tup: Tuple) -> None:
        result = self.function(element)
        if isinstance(result, Iterable):
            for item in result:
                self.emit_element(item, tup)
        else:
            self.emit_element(result, tup)


class FlatMapStage(ElementStage):
    PREFIX, BOLT, WHAT = "flatmap", FlatMapBolt, "FlatMap"
