"""Time windows for the streamlet operators (join, reduce_by_window,
reduce_by_key_and_window).

The window closes on the bolt's tick, set to the slide interval in ``initialize``.
A tumbling window (slide == duration) holds exactly the elements that arrived since the
previous close, so every element is in one window; a sliding window holds those that
arrived in the last ``duration`` seconds (arrival times kept to the sub-second). Tuples
are acked when they leave the window. Windows are given as ``Window(start, end)`` in
epoch seconds.

The bolts are stateful components, as heronpy's window bolts are: under EFFECTIVELY_ONCE
the open window (its tuples, their arrival times, the last close) is saved at each
checkpoint and given back on restore.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from compat.storm_api.tuple import Tuple
from heronpy.api import api_constants
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.bolt.window_bolt import SlidingWindowBolt, WindowContext
from heronpy.api.state.stateful_component import StatefulComponent
from heronpy.streamlet.impl.streamletboltbase import StreamletBoltBase, user_object

WINDOWDURATION = SlidingWindowBolt.WINDOW_DURATION_SECS
SLIDEINTERVAL = SlidingWindowBolt.WINDOW_SLIDEINTERVAL_SECS


_STATE_KEY = "streamlet.window"


class StreamletWindowBolt(StreamletBoltBase, Bolt, StatefulComponent):
    """Collects tuples and calls ``processWindow(window_info, tuples)`` each slide."""

    FUNCTION = "function"
    WINDOWDURATION = WINDOWDURATION
    SLIDEINTERVAL = SLIDEINTERVAL
    #: (tuple, arrival time) of the open windows, oldest first
    current_tuples: deque[tuple[Tuple, float]]

    def init_state(self, stateful_state: Any) -> None:
        self._saved_state = stateful_state

    def pre_save(self, checkpoint_id: Any) -> None:
        self._saved_state[_STATE_KEY] = {
            "last_close": self._last_close,
            "tuples": [[tup.id, tup.component, tup.stream, tup.task, list(tup.values), seen]
                       for tup, seen in self.current_tuples]}

    def _restore(self) -> None:
        saved = getattr(self, "_saved_state", None)
        if saved is None or _STATE_KEY not in saved:
            return
        window = saved[_STATE_KEY]
        self._last_close = window["last_close"]
        self.current_tuples = deque(
            (Tuple(tid, component, stream, task, tuple(values)), seen)
            for tid, component, stream, task, values, seen in window["tuples"])

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        self._setup_output(config)
        self.window_duration = float(config[WINDOWDURATION])
        self.slide_interval = float(config.get(SLIDEINTERVAL, self.window_duration))
        self._tumbling = self.slide_interval == self.window_duration
        config[api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS] = str(self.slide_interval)
        self.current_tuples = deque()
        self._last_close = time.time()
        self._restore()
        self.function = user_object(config, self.FUNCTION, type(self).__name__)
        self.setup(config)

    def setup(self, config: dict[str, Any]) -> None:
        """Operator-specific initialization."""

    def process(self, tup: Tuple) -> None:
        self.current_tuples.append((tup, time.time()))

    def process_tick(self, tup: Tuple) -> None:
        now = time.time()
        start = self._last_close if self._tumbling else now - self.window_duration
        if not self._tumbling:
            self._expire(start)
        self.processWindow(WindowContext(start, now), [entry[0] for entry in self.current_tuples])
        if self._tumbling:
            self._expire(now)
        self._last_close = now

    def _expire(self, before: float) -> None:
        while self.current_tuples and self.current_tuples[0][1] <= before:
            self.ack(self.current_tuples.popleft()[0])

    def processWindow(self, window_info: WindowContext, tuples: list[Any]) -> None:  # noqa: N802
        raise NotImplementedError


def pairs(tuples: list[Any], what: str) -> list[tuple[Any, Any, Any]]:
    """``(key, value, component)`` of each tuple of a keyed window."""
    out = []
    for tup in tuples:
        element = tup.values[0]
        if not isinstance(element, (list, tuple)) or len(element) != 2:
            raise RuntimeError(f"{what} tuples must be iterable of length 2, given: {element!r}")
        out.append((element[0], element[1], tup.component))
    return out


def hashable(key: Any) -> Any:
    """A dict key for ``key`` (lists, as msgpack turns tuples into, become tuples)."""
    if isinstance(key, list):
        return tuple(hashable(item) for item in key)
    try:
        hash(key)
    except TypeError:
        return repr(key)
    return key
