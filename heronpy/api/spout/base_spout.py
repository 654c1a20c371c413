"""``BaseSpout``: heronpy's ``spec()`` and ``emit()`` for spouts."""

from __future__ import annotations

import copy
from typing import Any

from compat.storm_api.spout import Spout as StormSpout
from heronpy.api.component.base_component import BaseComponent
from heronpy.api.component.component_spec import HeronComponentSpec
from heronpy.api.stream import Stream


class BaseSpout(BaseComponent, StormSpout):
    """The base of heronpy's ``Spout``: a ``compat.storm_api`` Spout our engines host."""

    # heronpy's spec(), not streamparse's: Heron's arguments and spec type
    @classmethod
    def spec(  # type: ignore[override]
        cls, name: str | None = None, par: int = 1, config: dict[str, Any] | None = None,
        optional_outputs: list[Any] | tuple[Any, ...] | None = None,
    ) -> HeronComponentSpec:
        """Place this spout in a topology; outputs are ``cls.outputs`` + ``optional_outputs``."""
        declared = getattr(cls, "outputs", None)  # the user's list
        outputs: list[Any] = copy.copy(declared) if declared is not None else []
        if optional_outputs is not None:
            assert isinstance(optional_outputs, (list, tuple))
            for out in optional_outputs:
                assert isinstance(out, (str, Stream))
                outputs.append(out)
        return HeronComponentSpec(name, f"{cls.__module__}.{cls.__name__}", is_spout=True,
                                  par=par, inputs=None, outputs=outputs, config=config,
                                  component_cls=cls)

    # heronpy's emit(): the stream is always named (no None for the default)
    def emit(  # type: ignore[override]
        self,
        tup: list[Any] | tuple[Any, ...],
        tup_id: Any = None,
        stream: str = Stream.DEFAULT_STREAM_ID,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit ``tup``; with a ``tup_id`` it is tracked (acked or failed) under ATLEAST_ONCE."""
        task_ids: list[int] | None = self.delegate.emit(tup, tup_id, stream, direct_task,
                                                        need_task_ids)
        return task_ids

    def _close(self) -> None:
        runtime_delegate = getattr(self, "_runtime", None)
        if runtime_delegate is not None:
            runtime_delegate.close()
        self.close()

    def close(self) -> None:
        """Called when this spout is going to be shut down (not guaranteed)."""
