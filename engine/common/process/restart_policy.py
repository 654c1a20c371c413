"""One restart policy for everything the engines restart, and the state it keeps.

Storm's supervisor and Heron's executor restart what fails forever; so do we. What
the policy decides is *when*:

* a failure after progress (the thing processed or emitted at least one tuple since it
  last started, or ran for ``reset_after_secs``) restarts at once;
* a failure with no progress waits ``initial_ms``, then twice that for the next one in a
  row, and so on, capped at ``max_ms``; progress resets the sequence;
* ``crash_loop_after`` failures in a row with no progress make the thing
  *crash-looping*: it keeps being retried, and the status (with its last error) is
  reported until it makes progress again (or runs for ``reset_after_secs``).

The same :class:`RestartTracker` serves a component restarted inside its process (the
heron instance, the storm engine's tasks), a process restarted by its executor, and an
executor restarted by the local scheduler; each keeps structured :class:`RestartRecord`\\ s
(name, attempt, delay, progressed, reason) that tests and status displays read.

Keys (topology config, ``-o KEY=VALUE``): ``heron.executor.restart.backoff.initial.ms``
(1000), ``heron.executor.restart.backoff.max.ms`` (30000) and
``heron.executor.restart.backoff.reset.secs`` (60).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

INITIAL_KEY = "heron.executor.restart.backoff.initial.ms"
MAX_KEY = "heron.executor.restart.backoff.max.ms"
RESET_KEY = "heron.executor.restart.backoff.reset.secs"

#: failures in a row with no progress that make a thing crash-looping
CRASH_LOOP_AFTER = 3
#: restart records kept per tracker (the oldest are dropped)
RECORDS_KEPT = 200

#: metrics an instance publishes about its component (in-process restarts) ...
CRASH_LOOPING_METRIC = "__crash-looping"
#: ... and those its Metrics Manager adds from the executor's view of the process
PROCESS_CRASH_LOOPING_METRIC = "__process-crash-looping"
PROCESS_LAST_ERROR_METRIC = "__process-last-error"
LAST_ERROR_METRIC = "__last-error"


class RestartPolicyError(ValueError):
    """A restart key holds a value that cannot be used; the message names the key."""


@dataclass(frozen=True)
class RestartPolicy:
    initial_ms: int = 1000
    max_ms: int = 30000
    reset_after_secs: float = 60.0
    crash_loop_after: int = CRASH_LOOP_AFTER

    def __post_init__(self) -> None:
        if self.initial_ms < 0:
            raise RestartPolicyError(f"{INITIAL_KEY} must be >= 0, got {self.initial_ms}")
        if self.max_ms < self.initial_ms:
            raise RestartPolicyError(f"{MAX_KEY} ({self.max_ms}) must be >= {INITIAL_KEY} "
                                     f"({self.initial_ms})")
        if self.reset_after_secs <= 0:
            raise RestartPolicyError(f"{RESET_KEY} must be > 0, got {self.reset_after_secs}")
        if self.crash_loop_after < 1:
            raise RestartPolicyError("the crash-loop threshold must be >= 1")

    @classmethod
    def from_config(cls, conf: Mapping[str, Any] | None) -> RestartPolicy:
        """The policy a topology's config asks for (defaults for absent keys)."""
        conf = conf or {}
        default = cls()

        def number(key: str, fallback: float, kind: type) -> Any:
            value = conf.get(key)
            if value is None:
                return kind(fallback)
            if isinstance(value, bool):
                raise RestartPolicyError(f"{key} must be a number, got {value!r}")
            try:
                return kind(float(value)) if kind is int else kind(value)
            except (TypeError, ValueError):
                raise RestartPolicyError(f"{key} must be a number, got {value!r}") from None

        initial = number(INITIAL_KEY, default.initial_ms, int)
        # an initial delay above the default cap raises the cap unless it is given
        cap = number(MAX_KEY, max(default.max_ms, initial), int)
        return cls(initial_ms=initial, max_ms=cap,
                   reset_after_secs=number(RESET_KEY, default.reset_after_secs, float))

    def delay_ms(self, failures_in_a_row: int) -> int:
        """The wait before restarting after the n-th failure in a row with no progress
        (n >= 1): initial, doubling, capped."""
        if failures_in_a_row <= 0:
            return 0
        delay = self.initial_ms
        for _ in range(failures_in_a_row - 1):
            delay *= 2
            if delay >= self.max_ms:
                return self.max_ms
        return min(delay, self.max_ms)

    def sequence(self, n: int) -> list[int]:
        """The first ``n`` delays of failures in a row with no progress."""
        return [self.delay_ms(i) for i in range(1, n + 1)]

    def to_config(self) -> dict[str, Any]:
        return {INITIAL_KEY: self.initial_ms, MAX_KEY: self.max_ms,
                RESET_KEY: self.reset_after_secs}


@dataclass(frozen=True)
class RestartRecord:
    """One restart decision."""

    name: str
    #: restarts of this thing so far, this one included
    attempt: int
    #: how long the restart waits (0: at once)
    delay_ms: int
    #: whether it had made progress since it last started (or ran long enough)
    progressed: bool
    #: what failed (an exception line, "exited with status 1")
    reason: str
    #: failures in a row with no progress, this one included (0 after progress)
    failures_in_a_row: int
    crash_looping: bool
    #: wall-clock time of the failure
    at: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class RestartTracker:
    """The restart state of one restartable thing (a component task, a process).

    Call :meth:`started` when it (re)starts, :meth:`progressed` when it is seen making
    progress, :meth:`failed` when it fails (returns the seconds to wait before the
    restart), and :meth:`tick` now and then while it runs (applies the reset after
    ``reset_after_secs`` of running)."""

    def __init__(self, name: str, policy: RestartPolicy | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 on_record: Callable[[RestartRecord], None] | None = None) -> None:
        self.name = name
        self.policy = policy or RestartPolicy()
        self._clock = clock
        self.on_record = on_record
        self.attempts = 0
        self.failures_in_a_row = 0
        self.crash_looping = False
        self.last_error = ""
        self.records: collections.deque[RestartRecord] = collections.deque(maxlen=RECORDS_KEPT)
        self.started_at = clock()
        #: progress seen since the last start
        self.progress_seen = False

    def started(self) -> None:
        self.started_at = self._clock()
        self.progress_seen = False

    def ran_long_enough(self) -> bool:
        return self._clock() - self.started_at >= self.policy.reset_after_secs

    def progressed(self) -> bool:
        """It made progress: the no-progress sequence and the crash-loop status reset.
        Returns whether the crash-loop status changed."""
        self.progress_seen = True
        self.failures_in_a_row = 0
        if self.crash_looping:
            self.crash_looping = False
            return True
        return False

    def tick(self) -> bool:
        """While running: reset once it ran ``reset_after_secs``; whether the crash-loop
        status changed."""
        if (self.failures_in_a_row or self.crash_looping) and self.ran_long_enough():
            return self.progressed()
        return False

    def failed(self, reason: str, progressed: bool = False) -> float:
        """Record a failure; the seconds to wait before restarting."""
        progressed = progressed or self.progress_seen or self.ran_long_enough()
        self.attempts += 1
        self.last_error = reason
        if progressed:
            self.failures_in_a_row = 0
            self.crash_looping = False
            delay_ms = 0
        else:
            self.failures_in_a_row += 1
            delay_ms = self.policy.delay_ms(self.failures_in_a_row)
            if self.failures_in_a_row >= self.policy.crash_loop_after:
                self.crash_looping = True
        record = RestartRecord(name=self.name, attempt=self.attempts, delay_ms=delay_ms,
                               progressed=progressed, reason=reason,
                               failures_in_a_row=self.failures_in_a_row,
                               crash_looping=self.crash_looping, at=time.time())
        self.records.append(record)
        self.progress_seen = False
        if self.on_record is not None:
            self.on_record(record)
        return delay_ms / 1000.0

    def status(self) -> dict[str, Any]:
        return {"name": self.name, "attempts": self.attempts,
                "failures_in_a_row": self.failures_in_a_row,
                "crash_looping": self.crash_looping, "last_error": self.last_error}


def crash_loop_error(metrics: Mapping[str, str]) -> str | None:
    """The last error of an instance whose metrics say it is crash-looping (its component
    inside the process, or the process itself as its executor sees it), else None."""
    if metrics.get(CRASH_LOOPING_METRIC) == "1":
        return metrics.get(LAST_ERROR_METRIC) or "crash-looping"
    if metrics.get(PROCESS_CRASH_LOOPING_METRIC) == "1":
        return (metrics.get(PROCESS_LAST_ERROR_METRIC) or metrics.get(LAST_ERROR_METRIC)
                or "crash-looping")
    return None
