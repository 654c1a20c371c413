"""``transform``: a user ``TransformOperator`` sees each input tuple and emits through its
context."""

from __future__ import annotations

from typing import Any

from compat.storm_api.tuple import Tuple
from heronpy.api.state.stateful_component import StatefulComponent
from heronpy.streamlet.impl.contextimpl import ContextImpl
from heronpy.streamlet.impl.elementbolt import ElementBolt, ElementStage
from heronpy.streamlet.transformoperator import TransformOperator


class TransformBolt(ElementBolt, StatefulComponent):
    """Calls ``operator.transform(tup)``; ``context.emit`` anchors to the current tuple.
    Stateful, as heronpy's: the operator finds the task's state in ``context.get_state()``."""

    FUNCTION = "operator"

    def init_state(self, stateful_state: Any) -> None:
        self._state = stateful_state

    def pre_save(self, checkpoint_id: Any) -> None:
        """The operator keeps what it needs in the state itself."""

    def setup(self, config: dict[str, Any], context: Any) -> None:
        self._current: Any = None
        self.function.setup(ContextImpl(context, getattr(self, "_state", None), self))

    def on_element(self, element: Any, tup: Tuple) -> None:
        self._current = tup
        try:
            self.function.transform(tup)
        finally:
            self._current = None

    def emit_context_value(self, value: Any) -> None:
        self.emit_output(value, anchors=[self._current] if self._current is not None else None)
        self.emitted += 1


class TransformStage(ElementStage):
    PREFIX, BOLT, WHAT = "transform", TransformBolt, "Transform"

    def __init__(self, transform_operator: Any, parent: Any) -> None:
        if not isinstance(transform_operator, TransformOperator):
            raise RuntimeError("Transform Operator has to be a TransformOperator")
        super().__init__(transform_operator, parent, needs_function=False)
