"""Spout backpressure, Heron's way: when anything this Stream Manager sends to (a local
instance or a peer Stream Manager) has more than the high watermark waiting, it stops
reading from its local spouts and tells every other Stream Manager to do the same; when
every queue is back under the low watermark it tells them it is over. Spouts here read
again only when neither this manager nor any peer is in backpressure, so one slow bolt
slows every spout in the topology and no process buffers without bound.

Defaults are sized for Python processes (Heron's are 100 MB / 50 MB per connection for
C++ Stream Managers): a Stream Manager holds at most about the high watermark per slow
destination; a local bolt holds at most its read credit more, a spout its write credit
(engine.common.network.credits), and a peer hop its zmq and kernel buffers.

Bytes alone cannot bound how long a word waits: 8 MB queued for a bolt that counts 2 MB
a second is four seconds. So a queue can also be measured by time, beyond Heron: with
``highwatermark.ms`` set, when the oldest message waiting for a destination has waited
that long the spouts are paused too, and they go again only when every queue is under
the low watermark in bytes *and* its oldest message has waited less than
``lowwatermark.ms`` (a fifth of the high one unless set). A flood then parks at most
about that long in a Stream Manager, whatever the bolts' rate (see
engine.common.network.inflight for the other hops). The watermarks' keys and their checks are
in engine.config.backpressure, below this module, because the submitter reads them too.
By default the time watermark is 40 ms (engine.config.backpressure): with byte
credits between a Stream Manager and its instances (engine.common.network.credits) a word waits
almost only in these queues, so it bounds a flooded word's wait. It pauses spouts only:
an instance is blamed (``InstanceBackpressure``, which the Health Manager reads) by bytes
alone unless ``highwatermark.ms`` is set, because a time watermark blames whichever
instance's queue is oldest, and under load that says nothing about which is slow.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

#: the Stream Manager's logger: these lines are its own
log = logging.getLogger("heron.stmgr")



class Backpressure:
    """Whether local spouts may be read, and for how long they were not."""

    def __init__(self, high: int, low: int, clock: Callable[[], float] = time.monotonic,
                 high_secs: float = float("inf"), low_secs: float = float("inf")) -> None:
        self.high = high
        self.low = low
        self.high_secs = high_secs
        self.low_secs = low_secs
        self._clock = clock
        #: this manager has announced backpressure (one of its queues is too long)
        self.initiated = False
        #: peers that announced backpressure and have not yet said it is over
        self.from_peers: set[str] = set()
        self._initiated_since: float | None = None
        self._paused_since: float | None = None
        self.initiated_secs = 0.0
        self.paused_secs = 0.0
        self.episodes = 0
        #: the most bytes ever seen waiting for one destination
        self.max_queue_bytes = 0
        #: the longest any queued message was seen waiting (seconds)
        self.max_wait = 0.0

    @property
    def paused(self) -> bool:
        return self.initiated or bool(self.from_peers)

    def update(self, largest_queue_bytes: int, longest_wait: float = 0.0) -> str | None:
        """"start" or "stop" when this manager's own state changes (announce it).
        ``longest_wait``: seconds the oldest queued message has waited."""
        change = None
        if largest_queue_bytes > self.max_queue_bytes:
            self.max_queue_bytes = largest_queue_bytes
        if longest_wait > self.max_wait:
            self.max_wait = longest_wait
        if not self.initiated and (largest_queue_bytes >= self.high
                                   or longest_wait >= self.high_secs):
            self.initiated = True
            self.episodes += 1
            self._initiated_since = self._clock()
            change = "start"
        elif (self.initiated and largest_queue_bytes < self.low
              and longest_wait < self.low_secs):
            self.initiated = False
            self.initiated_secs += self._clock() - (self._initiated_since or self._clock())
            self._initiated_since = None
            change = "stop"
        self._track_pause()
        return change

    def peer_started(self, peer: str) -> None:
        self.from_peers.add(peer)
        self._track_pause()

    def peer_stopped(self, peer: str) -> None:
        self.from_peers.discard(peer)
        self._track_pause()

    def keep_peers(self, peers: set[str]) -> None:
        """A new physical plan: a peer that is gone cannot say its backpressure is over."""
        self.from_peers &= peers
        self._track_pause()

    def _track_pause(self) -> None:
        now = self._clock()
        if self.paused and self._paused_since is None:
            self._paused_since = now
        elif not self.paused and self._paused_since is not None:
            self.paused_secs += now - self._paused_since
            self._paused_since = None

    def totals(self) -> tuple[float, float]:
        """(seconds this manager caused backpressure, seconds its spouts were paused),
        including a running episode."""
        now = self._clock()
        initiated = self.initiated_secs + (now - self._initiated_since
                                           if self._initiated_since else 0.0)
        paused = self.paused_secs + (now - self._paused_since if self._paused_since else 0.0)
        return initiated, paused


class InstanceBackpressure:
    """Which local instances keep this Stream Manager in backpressure, and for how long
    in total (Heron's ``__time_spent_back_pressure_by_compid/<instance>``).

    Heron's rule per instance connection: it starts causing backpressure when the bytes
    waiting for it reach the high watermark and stops when they fall under the low one
    (and, as for the whole manager, by the time its oldest message has waited).
    The cumulative time is what the Health Manager reads to tell which bolt is the
    bottleneck (the per-manager figures cannot name it)."""

    def __init__(self, high: int, low: int, clock: Callable[[], float] = time.monotonic,
                 high_secs: float = float("inf"), low_secs: float = float("inf")) -> None:
        self.high = high
        self.low = low
        self.high_secs = high_secs
        self.low_secs = low_secs
        self._clock = clock
        #: instance key -> when it started causing backpressure
        self._since: dict[Any, float] = {}
        #: instance key -> seconds of finished episodes
        self._secs: dict[Any, float] = {}

    def update(self, queued: Mapping[Any, int], waited: Mapping[Any, float] | None = None) -> None:
        """``queued``: bytes waiting per instance, ``waited``: seconds its oldest message
        has waited (instances without a queue may be absent from both: nothing waits)."""
        now = self._clock()
        waited = waited or {}
        for key, waiting in queued.items():
            if key not in self._since and (waiting >= self.high
                                           or waited.get(key, 0.0) >= self.high_secs):
                self._since[key] = now
        for key in [k for k in self._since if queued.get(k, 0) < self.low
                    and waited.get(k, 0.0) < self.low_secs]:
            self._secs[key] = self._secs.get(key, 0.0) + now - self._since.pop(key)

    def forget(self, key: Any) -> None:
        """The instance went away: its running episode ends now (its total is kept: the
        metric is cumulative for the life of this Stream Manager)."""
        since = self._since.pop(key, None)
        if since is not None:
            self._secs[key] = self._secs.get(key, 0.0) + self._clock() - since

    def causing(self) -> set[Any]:
        return set(self._since)

    def total_ms(self, key: Any) -> int:
        """Milliseconds ``key`` has kept this manager in backpressure, including a
        running episode."""
        since = self._since.get(key)
        running = self._clock() - since if since is not None else 0.0
        return int((self._secs.get(key, 0.0) + running) * 1000)


#: a flapping backpressure (its own, or a peer's) logs at most one line this often
BACKPRESSURE_LOG_SECS = 1.0


class EpisodeLog:
    """The log lines of one backpressure (this manager's own, or one peer's), limited so
    that a flapping one does not flood the log: the first episode after a quiet second is
    logged in full, its start and its stop; the episodes that follow within the second
    are only counted, and at most one summary line a second gives their count, the time
    spent in backpressure and the state now. A second with no episode ends the flapping,
    and the next episode is logged in full again. ``clock`` is injectable for tests."""

    def __init__(self, what: str, clock=time.monotonic,
                 interval: float = BACKPRESSURE_LOG_SECS) -> None:
        self.what = what
        self.clock = clock
        self.interval = interval
        self._last_line: float | None = None
        self._logged = False  # the current episode's start was logged
        self._started: float | None = None
        self._counted = 0  # episodes since the last line, not logged one by one
        self._counted_secs = 0.0
        self._counted_since: float | None = None

    def start(self, text: str, *args: Any) -> None:
        now = self.clock()
        self._started = now
        if not self._counted and (self._last_line is None
                                  or now - self._last_line >= self.interval):
            log.info(text, *args)
            self._last_line, self._logged = now, True
            return
        self._logged = False
        if not self._counted:
            self._counted_since = self._last_line
        self._counted += 1
        self.flush(active=True)

    def stop(self, text: str, *args: Any) -> None:
        now = self.clock()
        lasted = now - self._started if self._started is not None else 0.0
        self._started = None
        if self._logged:
            self._logged = False
            log.info(text + " after %.0f ms", *args, lasted * 1000)
            self._last_line = now
            return
        self._counted_secs += lasted
        self.flush(active=False)

    def flush(self, active: bool) -> None:
        """The summary line of the episodes counted since the last line, once a second
        has passed since it (called on every event and on every turn of the loop)."""
        if not self._counted:
            return
        now = self.clock()
        if self._last_line is not None and now - self._last_line < self.interval:
            return
        since = self._counted_since if self._counted_since is not None else now
        in_bp = self._counted_secs + (now - self._started
                                      if active and self._started is not None else 0.0)
        log.info("%s flapping: %d more episode(s) in the last %.1f s, %.0f ms of it in "
                 "backpressure; %s now", self.what, self._counted, now - since, in_bp * 1000,
                 "in backpressure" if active else "out of it")
        self._counted, self._counted_secs, self._counted_since = 0, 0.0, None
        self._last_line = now
        if active and self._started is not None:
            self._started = now  # what remains of this episode counts in the next line
