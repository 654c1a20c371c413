"""heronpy's window bolts: ``SlidingWindowBolt`` and ``TumblingWindowBolt``.

Time windows kept in the bolt and closed on tick tuples, as heronpy does: ``initialize``
reads the window from the config and sets ``topology.tick.tuple.freq.secs`` to the slide
interval (sliding) or the duration (tumbling); a tick calls ``processWindow(window_info,
tuples)``. Sliding: a tuple is acked when it leaves the window; tumbling: every tuple of a
window is acked after ``processWindow``.

Both are stateful components: under EFFECTIVELY_ONCE the tuples of the open window are
saved at each checkpoint and given back on restore. They are saved as plain values (not
Tuple objects), so the topology's tuple serializer (msgpack by default) can store them.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections import deque, namedtuple
from typing import Any

from compat.storm_api.tuple import Tuple
from heronpy.api import api_constants
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.state.stateful_component import StatefulComponent

WindowContext = namedtuple("WindowContext", ("start", "end"))

_STATE_KEY = "tuples"


def _saved(entries: Any, with_time: bool) -> list[Any]:
    """The window's tuples as plain lists: [id, component, stream, task, values, time]."""
    out = []
    for entry in entries:
        tup, seen = entry if with_time else (entry, None)
        out.append([tup.id, tup.component, tup.stream, tup.task, list(tup.values), seen])
    return out


def _restored(saved: Any, with_time: bool) -> deque[Any]:
    entries: deque[Any] = deque()
    for tid, component, stream, task, values, seen in saved or []:
        tup = Tuple(tid, component, stream, task, tuple(values))
        entries.append((tup, seen) if with_time else tup)
    return entries


def _window_secs(config: dict[str, Any], key: str, logger: Any) -> int | None:
    if key not in config:
        logger.fatal("Window Duration has to be specified in the config")
        return None
    return int(config[key])


class SlidingWindowBolt(Bolt, StatefulComponent):
    """Calls ``processWindow`` every slide interval with the last duration's tuples."""

    WINDOW_DURATION_SECS = "slidingwindowbolt_duration_secs"
    WINDOW_SLIDEINTERVAL_SECS = "slidingwindowbolt_slideinterval_secs"

    def init_state(self, stateful_state: Any) -> None:
        self.saved_state = stateful_state

    def pre_save(self, checkpoint_id: Any) -> None:
        self.saved_state[_STATE_KEY] = _saved(self.current_tuples, with_time=True)

    @abstractmethod
    def processWindow(self, window_info: WindowContext, tuples: list[Any]) -> None:  # noqa: N802
        """Called every slide interval with the tuples of the last window duration."""

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        """Read the window and set the tick frequency to the slide interval."""
        self.window_duration = _window_secs(config, self.WINDOW_DURATION_SECS, self.logger)
        self.slide_interval: int | None
        if self.WINDOW_SLIDEINTERVAL_SECS in config:
            self.slide_interval = int(config[self.WINDOW_SLIDEINTERVAL_SECS])
        else:
            self.slide_interval = self.window_duration
        if self.slide_interval is not None and self.window_duration is not None \
                and self.slide_interval > self.window_duration:
            self.logger.fatal("Slide Interval should be <= Window Duration")
        config[api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS] = str(self.slide_interval)
        self.current_tuples: deque[Any] = deque()
        saved = getattr(self, "saved_state", None)
        if saved is not None and _STATE_KEY in saved:
            self.current_tuples = _restored(saved[_STATE_KEY], with_time=True)

    def process(self, tup: Tuple) -> None:
        """Add the tuple to the window, and expire (ack) those that left it."""
        now = int(time.time())
        self.current_tuples.append((tup, now))
        self._expire(now)

    def _expire(self, now: int) -> None:
        # window_duration is None when the config lacks it (logged as fatal, as heronpy
        # does); the subtraction then raises TypeError, as heronpy's does
        while (self.current_tuples
               and now - self.window_duration > self.current_tuples[0][1]):  # type: ignore[operator]
            tup, _ = self.current_tuples.popleft()
            self.ack(tup)

    def process_tick(self, tup: Tuple) -> None:
        """Close a window: ``processWindow`` with its tuples, then expire the old ones."""
        now = int(time.time())
        # window_duration is None when the config lacks it (logged as fatal, as heronpy
        # does); the subtraction then raises TypeError, as heronpy's does
        window_info = WindowContext(now - self.window_duration, now)  # type: ignore[operator]
        self.processWindow(window_info, [entry[0] for entry in self.current_tuples])
        self._expire(now)


class TumblingWindowBolt(Bolt, StatefulComponent):
    """Calls ``processWindow`` every duration with the tuples that arrived in it."""

    WINDOW_DURATION_SECS = "tumblingwindowbolt_duration_secs"

    def init_state(self, stateful_state: Any) -> None:
        self.saved_state = stateful_state

    def pre_save(self, checkpoint_id: Any) -> None:
        self.saved_state[_STATE_KEY] = _saved(self.current_tuples, with_time=False)

    @abstractmethod
    def processWindow(self, window_info: WindowContext, tuples: list[Any]) -> None:  # noqa: N802
        """Called every window duration with the tuples of that window."""

    def initialize(self, config: dict[str, Any], context: Any) -> None:
        """Read the window and set the tick frequency to its duration."""
        self.window_duration = _window_secs(config, self.WINDOW_DURATION_SECS, self.logger)
        config[api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS] = str(self.window_duration)
        self.current_tuples: deque[Any] = deque()
        saved = getattr(self, "saved_state", None)
        if saved is not None and _STATE_KEY in saved:
            self.current_tuples = _restored(saved[_STATE_KEY], with_time=False)

    def process(self, tup: Tuple) -> None:
        """Add the tuple to the open window."""
        self.current_tuples.append(tup)

    def process_tick(self, tup: Tuple) -> None:
        """Close the window: ``processWindow`` with its tuples, then ack them."""
        now = int(time.time())
        # window_duration is None when the config lacks it (logged as fatal, as heronpy
        # does); the subtraction then raises TypeError, as heronpy's does
        window_info = WindowContext(now - self.window_duration, now)  # type: ignore[operator]
        self.processWindow(window_info, list(self.current_tuples))
        for tup_ in self.current_tuples:
            self.ack(tup_)
        self.current_tuples.clear()
