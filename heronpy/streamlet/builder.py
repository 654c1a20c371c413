"""``Builder``: where a streamlet graph starts (``new_source``) and how it is planned into
a heronpy ``TopologyBuilder`` (``build``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from heronpy.api.topology import TopologyBuilder
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.impl.generatorspout import GeneratorStage
from heronpy.streamlet.impl.supplierspout import SupplierStage
from heronpy.streamlet.streamlet import Streamlet


class Builder:
    """Holds the graph's sources; every streamlet is reachable from one of them."""

    def __init__(self) -> None:
        self._sources: list[Streamlet] = []

    def new_source(self, source: Generator | Callable[[], Any]) -> Streamlet:
        """A source streamlet from a ``Generator`` or a callable (called for each element)."""
        if isinstance(source, Generator):
            streamlet = Streamlet(GeneratorStage(source))
        elif callable(source):
            streamlet = Streamlet(SupplierStage(source))
        else:
            raise RuntimeError("Builder's new source has to be either a Generator or a function")
        self._sources.append(streamlet)
        return streamlet

    def build(self, bldr: Any = None) -> Any:
        """Add every stage to ``bldr`` (a heronpy ``TopologyBuilder``; a new one named
        ``streamlet`` when not given) and return it. A graph may be built more than once
        (each build plans it afresh)."""
        if bldr is None:
            bldr = TopologyBuilder(name="streamlet")
        for source in self._sources:
            source._unbuild()
        stage_names: set[str] = set()
        for source in self._sources:
            source._build(bldr, stage_names)
        for source in self._sources:
            if not source._all_built():
                raise RuntimeError("Topology cannot be fully built! Are all sources added?")
        return bldr
