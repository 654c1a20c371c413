"""``filter``: the elements ``function(element)`` is true for."""

from __future__ import annotations

from typing import Any

from compat.storm_api.tuple import Tuple
from heronpy.streamlet.impl.elementbolt import ElementBolt, ElementStage


class FilterBolt(ElementBolt):
    """Emits the element when ``function(element)`` is true."""

    def on_element(self, element: Any, tup: Tuple) -> None:
        if self.function(element):
            self.emit_element(element, tup)


class FilterStage(ElementStage):
    PREFIX, BOLT, WHAT = "filter", FilterBolt, "Filter"
