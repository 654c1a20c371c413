"""Each instance's counters added up across its restarts, as the Topology Master keeps them.

An instance process counts from 0 when it starts (Heron's counters are per process
lifetime), so after a ``kill -9`` of a bolt its ``__execute-count`` fell back to 0 in
``heron metrics``, ``heron run``'s table and the tracker's API, as if the work done before
had not happened. The Topology Master sees every value each instance reports: a counter
that goes down means the process started again, and what it had counted before is
carried over. The Metrics Managers' Prometheus endpoints still serve per-process counters,
as Prometheus expects (its ``rate`` handles resets); a restart of the Topology Master
itself starts the totals again from what the instances report then.
"""

from __future__ import annotations

from engine.common.runtime.stats import COUNTERS


class CounterTotals:
    """For each (instance, counter): what earlier processes of the instance counted, and
    the last value the current one reported."""

    def __init__(self) -> None:
        self._carried: dict[tuple[object, str], float] = {}
        self._last: dict[tuple[object, str], float] = {}

    def total(self, key: object, name: str, value: str) -> str:
        """The value to keep for ``name`` just reported as ``value`` by ``key``'s
        instance: unchanged for what is not a counter, or not a number."""
        if name not in COUNTERS:
            return value
        try:
            number = float(value)
        except ValueError:
            return value
        slot = (key, name)
        last = self._last.get(slot)
        if last is not None and number < last:  # the process started again
            self._carried[slot] = self._carried.get(slot, 0.0) + last
        self._last[slot] = number
        carried = self._carried.get(slot, 0.0)
        if not carried:
            return value
        total = number + carried
        return str(int(total)) if total.is_integer() else str(total)

    def forget(self, key: object) -> None:
        """An instance that left the plan (``heron update``): its totals go with it."""
        for slot in [s for s in self._last if s[0] == key]:
            self._last.pop(slot, None)
            self._carried.pop(slot, None)
