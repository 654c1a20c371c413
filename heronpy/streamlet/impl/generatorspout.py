"""A ``Generator`` source: ``setup(context)`` in each task, then an element per ``get()``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heronpy.api.spout.spout import Spout
from heronpy.api.state.stateful_component import StatefulComponent
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.impl.contextimpl import ContextImpl
from heronpy.streamlet.impl.stage import Stage, StreamletNode
from heronpy.streamlet.impl.streamletboltbase import ToPack, user_object
from heronpy.streamlet.impl.streamletspoutbase import StreamletSpoutBase

if TYPE_CHECKING:
    from heronpy.api.topology import TopologyBuilder


class GeneratorSpout(StreamletSpoutBase, Spout, StatefulComponent):
    """Emits each non-None ``get()`` on ``output`` (no tuple id, as heronpy's). Stateful,
    as heronpy's: the generator finds the task's state in ``context.get_state()`` (saved
    and restored under EFFECTIVELY_ONCE)."""

    GENERATOR = "generator"

    def init_state(self, stateful_state: Any) -> None:
        self._state = stateful_state

    def pre_save(self, checkpoint_id: Any) -> None:
        """The generator keeps what it needs in the state itself."""

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self._setup_output(config)
        self.emitted = 0
        self._generator = user_object(config, self.GENERATOR, "GeneratorSpout")
        self._generator.logger = self.logger
        self._generator.setup(ContextImpl(context, getattr(self, "_state", None), self))

    def next_tuple(self) -> None:
        value = self._generator.get()
        if value is not None:
            self.emit_context_value(value)

    def emit_context_value(self, value: Any) -> None:
        self.emit_output(value)
        self.emitted += 1


class GeneratorStage(Stage):
    """A source stage (one partition unless set)."""

    def __init__(self, generator: Generator) -> None:
        if not isinstance(generator, Generator):
            raise RuntimeError("Generator has to be of type Generator")
        self._generator = generator

    def build(self, node: StreamletNode, builder: TopologyBuilder,
              stage_names: set[str]) -> bool:
        return node._add_spout_stage(builder, stage_names, "generator", GeneratorSpout,
                                     {GeneratorSpout.GENERATOR: ToPack(self._generator)})
