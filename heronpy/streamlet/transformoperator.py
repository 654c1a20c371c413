"""``TransformOperator``: a user-defined operator (``streamlet.transform(MyOperator())``)."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from compat.storm_api.tuple import Tuple


class TransformOperator:
    """``setup(context)`` once per task, then ``transform(tup)`` for each input tuple (the
    element is ``tup.values[0]``); results go out with ``context.emit(value)``."""

    @abstractmethod
    def setup(self, context: Any) -> None:
        """Called once in each task before the first ``transform``; keep the context."""
        raise NotImplementedError("TransformOperator not implementing setup() method.")

    @abstractmethod
    def transform(self, tup: Tuple) -> None:
        """Process one input tuple; emit through the context given to ``setup``."""
        raise NotImplementedError("TransformOperator not implementing transform() method.")
