"""The shape shared by the one-element-at-a-time operators (map, flat_map, filter,
repartition, union, transform, log, consume): a bolt that handles each input element and
acks its tuple, anchoring what it emits to it (so ATLEAST_ONCE tracks the whole tree), and
the single-parent stage that plans it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compat.storm_api.tuple import Tuple
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.stream import Grouping
from heronpy.streamlet.impl.stage import Stage, StreamletNode, check_callable, check_streamlet
from heronpy.streamlet.impl.streamletboltbase import StreamletBoltBase, ToPack, user_object

if TYPE_CHECKING:
    from heronpy.api.topology import TopologyBuilder


class ElementBolt(StreamletBoltBase, Bolt):
    """Calls ``on_element(element, tup)`` for each input tuple, then acks it."""

    #: config key of the packed user function (None: the operator has none)
    FUNCTION: str | None = "function"

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self._setup_output(config)
        self.processed = 0
        self.emitted = 0
        # the user's function or operator (None for an operator that takes none)
        self.function: Any = (user_object(config, self.FUNCTION, type(self).__name__)
                              if self.FUNCTION else None)
        self.setup(config, context)

    def setup(self, config: dict[str, Any], context: Any) -> None:
        """Operator-specific initialization (after the function is unpacked)."""

    def process(self, tup: Tuple) -> None:
        self.on_element(tup.values[0], tup)
        self.processed += 1
        self.ack(tup)

    def on_element(self, element: Any, tup: Tuple) -> None:
        raise NotImplementedError

    def emit_element(self, element: Any, tup: Tuple) -> None:
        self.emit_output(element, anchors=[tup])
        self.emitted += 1


class ElementStage(Stage):
    """A stage with one parent (shuffled in) and, optionally, a user function."""

    PREFIX = "element"
    # heronpy's Bolt marks process_tick abstract yet gives it a body, and is no ABC: the
    # bolt classes are concrete at run time
    BOLT: type[ElementBolt] = ElementBolt  # type: ignore[type-abstract]
    WHAT = "Element"

    def __init__(self, function: Any, parent: StreamletNode,
                 needs_function: bool = True) -> None:
        if needs_function:
            check_callable(function, self.WHAT)
        check_streamlet(parent, self.WHAT)
        self._function = function
        self._parent = parent
        self.num_partitions = parent.get_num_partitions()

    def _grouping(self) -> Any:
        return Grouping.SHUFFLE

    def _component_config(self) -> dict[str, Any]:
        if self._function is None or not self.BOLT.FUNCTION:
            return {}
        return {self.BOLT.FUNCTION: ToPack(self._function)}

    def build(self, node: StreamletNode, builder: TopologyBuilder,
              stage_names: set[str]) -> bool:
        return node._add_bolt_stage(builder, stage_names, self.PREFIX, self.BOLT,
                                    self._parent._input_of(self._grouping()),
                                    self._component_config())
