"""A plain-callable source: every ``next_tuple`` emits ``function()``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heronpy.api.spout.spout import Spout
from heronpy.streamlet.impl.stage import Stage, StreamletNode, check_callable
from heronpy.streamlet.impl.streamletboltbase import ToPack, user_object
from heronpy.streamlet.impl.streamletspoutbase import StreamletSpoutBase

if TYPE_CHECKING:
    from heronpy.api.topology import TopologyBuilder


class SupplierSpout(StreamletSpoutBase, Spout):
    """Emits ``function()`` each time it is asked for a tuple (None included, as heronpy's)."""

    FUNCTION = "function"

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self._setup_output(config)
        self.emitted = 0
        self._supplier_function = user_object(config, self.FUNCTION, "SupplierSpout")

    def next_tuple(self) -> None:
        self.emit_output(self._supplier_function())
        self.emitted += 1


class SupplierStage(Stage):
    """A source stage from a callable."""

    def __init__(self, supplier_function: Callable[[], Any]) -> None:
        check_callable(supplier_function, "Supplier")
        self._supplier_function = supplier_function

    def build(self, node: StreamletNode, builder: TopologyBuilder,
              stage_names: set[str]) -> bool:
        return node._add_spout_stage(builder, stage_names, "supplier", SupplierSpout,
                                     {SupplierSpout.FUNCTION: ToPack(self._supplier_function)})
