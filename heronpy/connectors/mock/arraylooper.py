"""``ArrayLooper``: a Generator that cycles through a list forever (examples, tests)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from typing import Any

from heronpy.streamlet.generator import Generator


class ArrayLooper(Generator):
    """Yields the iterable's items in order, again and again; sleeps ``sleep`` seconds
    before each when given."""

    def __init__(self, user_iterable: Iterable[Any], sleep: float | None = None) -> None:
        super().__init__()
        if not isinstance(user_iterable, Iterable):
            raise RuntimeError("ArrayLooper must be passed an iterable")
        self._user_iterable = list(user_iterable)
        self._sleep = sleep

    def setup(self, context: Any) -> None:
        self._curiter = itertools.cycle(self._user_iterable)

    def get(self) -> Any:
        if self._sleep is not None:
            time.sleep(self._sleep)
        return next(self._curiter, None)
