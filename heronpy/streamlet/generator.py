"""``Generator``: a user-defined source (``Builder.new_source(MyGenerator())``)."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any


class Generator:
    """A source: ``setup(context)`` once per task, then ``get()`` for each next element
    (``None``: nothing at the moment). The instance is pickled into the topology, so set up
    connections in ``setup``, not ``__init__``."""

    @abstractmethod
    def setup(self, context: Any) -> None:
        """Called once in each task before the first ``get``."""
        raise NotImplementedError("Generator not implementing setup() method.")

    @abstractmethod
    def get(self) -> Any:
        """The next element, or None when there is none at the moment."""
        raise NotImplementedError("Generator not implementing get() method.")
