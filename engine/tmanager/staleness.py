"""How old a process's figures are, as the Topology Master tells it.

The Topology Master keeps the latest value of every metric, and a process that died
keeps its last values there until its replacement reports (or for good, when its node is
gone). So each instance's answer carries :data:`REPORT_AGE_METRIC`, the seconds since that
process last published (its Metrics Manager stamps every forwarded figure with the time
its process published it; a dead Metrics Manager stops forwarding altogether). Readers
(``heron metrics``, the tracker, its page) call figures older than
:data:`STALE_AFTER_SECS` stale: processes publish every second and Metrics Managers
forward every second, so five seconds is several missed reports, not jitter.
"""

from __future__ import annotations

from collections.abc import Mapping

#: seconds since the process last published its figures (a metric of every instance)
REPORT_AGE_METRIC = "__report-age"
#: older than this, a process's figures are stale (it is dead, stuck or unreachable)
STALE_AFTER_SECS = 5.0


def report_age(values: Mapping[str, str | float]) -> float | None:
    """The age of one instance's figures, None when its answer does not say."""
    try:
        return float(values[REPORT_AGE_METRIC])
    except (KeyError, ValueError):
        return None


def stale_age(values: Mapping[str, str | float]) -> float | None:
    """The age of one instance's figures when they are stale, else None."""
    age = report_age(values)
    return age if age is not None and age > STALE_AFTER_SECS else None
