"""``consume``: ``function(element)`` called for every element (a sink)."""

from __future__ import annotations

from typing import Any

from compat.storm_api.tuple import Tuple
from heronpy.streamlet.impl.elementbolt import ElementBolt, ElementStage


class ConsumeBolt(ElementBolt):
    """Calls the consume function; emits nothing."""

    FUNCTION = "consumefunction"

    def on_element(self, element: Any, tup: Tuple) -> None:
        self.function(element)


class ConsumeStage(ElementStage):
    PREFIX, BOLT, WHAT = "consume", ConsumeBolt, "Consume"
