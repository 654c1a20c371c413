"""``BaseBolt``: heronpy's ``spec()``, ``emit()``, ``ack()``, ``fail()``, ``is_tick()``."""

from __future__ import annotations

import copy
from typing import Any

from compat.storm_api.bolt import Bolt as StormBolt
from compat.storm_api.tuple import Tuple
from heronpy.api.component.base_component import BaseComponent
from heronpy.api.component.component_spec import HeronComponentSpec
from heronpy.api.stream import Stream
from heronpy.api.tuple import TupleHelper


class BaseBolt(BaseComponent, StormBolt):
    """The base of heronpy's ``Bolt``: a ``compat.storm_api`` Bolt with heronpy's rules:
    nothing is anchored or acked unless the bolt says so."""

    auto_anchor = False
    auto_ack = False
    auto_fail = False
    #: a stateful heronpy bolt fed only by fields groupings whose ``HashMapState`` holds
    #: only keys it receives (a word count's words) keeps its entries when its
    #: parallelism changes: each moves to its key's new task (engine.statefulstorage.rescale;
    #: Heron dropped such state). Any other key (a per-task total) freezes the parallelism.
    rescale_state_by_key = True

    # heronpy's spec(), not streamparse's: Heron's arguments and spec type
    @classmethod
    def spec(  # type: ignore[override]
        cls, name: str | None = None, inputs: Any = None, par: int = 1,
        config: dict[str, Any] | None = None,
        optional_outputs: list[Any] | tuple[Any, ...] | None = None,
    ) -> HeronComponentSpec:
        """Place this bolt in a topology: ``inputs`` is ``{spec or spec['stream']:
        Grouping}`` or a list (SHUFFLE)."""
        declared = getattr(cls, "outputs", None)  # the user's list
        outputs: list[Any] = copy.copy(declared) if declared is not None else []
        if optional_outputs is not None:
            assert isinstance(optional_outputs, (list, tuple))
            for out in optional_outputs:
                assert isinstance(out, (str, Stream))
                outputs.append(out)
        return HeronComponentSpec(name, f"{cls.__module__}.{cls.__name__}", is_spout=False,
                                  par=par, inputs=inputs, outputs=outputs, config=config,
                                  component_cls=cls)

    # heronpy's emit(): the stream is always named (no None for the default)
    def emit(  # type: ignore[override]
        self, tup: list[Any] | tuple[Any, ...], stream: str = Stream.DEFAULT_STREAM_ID,
        anchors: list[Any] | None = None, direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit ``tup``, anchored to ``anchors`` (input tuples) when given."""
        task_ids: list[int] | None = self.delegate.emit(tup, stream, anchors, direct_task,
                                                        need_task_ids)
        return task_ids

    @staticmethod
    def is_tick(tup: Tuple) -> bool:
        """Whether ``tup`` is a tick tuple."""
        return tup.stream == TupleHelper.TICK_TUPLE_ID

    def ack(self, tup: Tuple) -> None:
        """Indicate that processing of a Tuple has succeeded."""
        self.delegate.ack(tup)

    def fail(self, tup: Tuple) -> None:
        """Indicate that processing of a Tuple has failed (its spout tuple fails at once)."""
        self.delegate.fail(tup)

    def _close(self) -> None:
        runtime_delegate = getattr(self, "_runtime", None)
        if runtime_delegate is not None:
            runtime_delegate.close()
        super()._close()
