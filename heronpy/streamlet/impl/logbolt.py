"""``log``: every element written to the component's log at info level."""

from __future__ import annotations

from typing import Any

from compat.storm_api.tuple import Tuple
from heronpy.streamlet.impl.elementbolt import ElementBolt, ElementStage


class LogBolt(ElementBolt):
    """Logs ``str(element)``; emits nothing."""

    FUNCTION = None

    def on_element(self, element: Any, tup: Tuple) -> None:
        self.logger.info(str(element))


class LogStage(ElementStage):
    PREFIX, BOLT, WHAT = "log", LogBolt, "Log"

    def __init__(self, parent: Any) -> None:
        super().__init__(None, parent, needs_function=False)
