"""``map``: each element replaced by ``function(element)``."""

from __future__ import annotations

from typing import Any

from compat.storm_api.tuple import Tuple
from heronpy.streamlet.impl.elementbolt import ElementBolt, ElementStage


class MapBolt(ElementBolt):
    """Emits ``function(element)``."""

    def on_element(self, element: Any, tup: Tuple) -> None:
        self.emit_element(self.function(element), tup)


class MapStage(ElementStage):
    PREFIX, BOLT, WHAT = "map", MapBolt, "Map"
