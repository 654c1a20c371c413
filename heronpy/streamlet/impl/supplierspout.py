"""A plain-callable source: every ``next_tuple`` emits ``function()``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heronpy.api.spout.spout import Spout
from heronpy.streamlet.impl.streamletboltbase import ToPack, user_object
from heronpy.streamlet.impl.streamletspoutbase import StreamletSpoutBase
from heronpy.streamlet.streamlet import Streamlet, check_callable

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


class SupplierStreamlet(Streamlet):
    """A source stage from a callable."""

    def __init__(self, supplier_function: Callable[[], Any]) -> None:
        super().__init__()
        check_callable(supplier_function, "Supplier")
        self._supplier_function = supplier_function

    def _build_this(self, builder: TopologyBuilder, stage_names: set[str]) -> bool:
        return self._add_spout_stage(builder, stage_names, "supplier", SupplierSpout,
                                     {SupplierSpout.FUNCTION: ToPack(self._supplier_function)})
