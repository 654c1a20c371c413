"""Which instance a Stream Manager's unblamed backpressure is owed to.

A Stream Manager blames a local instance for backpressure
(``__time_spent_back_pressure_by_compid/<instance>``) only while the bytes waiting for
it are over the high watermark, Heron's rule. It also pauses its spouts when the oldest
message waiting for any destination has waited longer than the time watermark (40 ms
by default) and blames nobody for that (engine/stmgr/backpressure.py: a time watermark
alone would blame whichever queue is oldest). Under byte credits that pause is most of
the backpressure there is: an instance holds its read credit (64 KiB by default) and
only what is beyond it waits in the Stream Manager, so the bytes waiting for a slow
instance may stay under the high watermark while the spouts stay paused for whole
windows. The Health Manager would then see a topology held still with no component in
backpressure, and diagnose nothing (Heron's three diagnosers start from backpressure).

So the Health Manager reads the Stream Manager's own total
(``__time-spent-back-pressure-initiated-ms``) too, and shares what no instance was
blamed for among its local instances by the bytes waiting for each at the two polls
around it. Under credits bytes wait in a Stream Manager only for an instance whose read
credit is used up, i.e. one that is behind; an instance that keeps up has none waiting
and gets no share. When no bytes wait for any local instance at either poll (the pause
was for a peer Stream Manager's queue, or too short to be seen), nothing is shared out:
no evidence."""

from __future__ import annotations

from collections.abc import Mapping

from engine.healthmgr.metrics import (
    BACK_PRESSURE,
    BACK_PRESSURE_INITIATED,
    WAIT_QUEUE,
    counter_increase,
    instance_in,
    metric_name,
)


def local_instances(metrics: Mapping[str, float]) -> set[str]:
    """The instances a Stream Manager publishes per-instance metrics for (its own)."""
    found = set()
    for name in metrics:
        instance = instance_in(WAIT_QUEUE, name) or instance_in(BACK_PRESSURE, name)
        if instance is not None:
            found.add(instance)
    return found


def unblamed_shares(before: Mapping[str, float], after: Mapping[str, float],
                    elapsed: float) -> dict[str, float]:
    """Milliseconds of one Stream Manager's backpressure between two polls (``before``
    and ``after``: its metrics, ``elapsed`` seconds apart) that no instance was blamed
    for, shared among its local instances by the mean of the bytes waiting for each at
    the two polls. Every local instance of ``after`` is in the answer (0 when it gets no
    share), so that the derived counters advance at every poll together.

    What was blamed is taken as the largest blamed increase of one instance: blame by
    bytes starts and ends with the manager's own, so each instance's blamed time lies
    within the manager's; two instances blamed at different times make this share an
    overestimate, bounded by the elapsed time like the rest."""
    instances = local_instances(after)
    shares = dict.fromkeys(instances, 0.0)
    held_before = before.get(BACK_PRESSURE_INITIATED)
    held_after = after.get(BACK_PRESSURE_INITIATED)
    if held_before is None or held_after is None or elapsed <= 0:
        return shares
    held = min(counter_increase(held_before, held_after), elapsed * 1000.0)
    blamed = 0.0
    for instance in instances:
        name = metric_name(BACK_PRESSURE, instance)
        if name in after:
            blamed = max(blamed, counter_increase(before.get(name, 0.0), after[name]))
    unblamed = held - blamed
    if unblamed <= 0:
        return shares
    weights = {i: (before.get(metric_name(WAIT_QUEUE, i), 0.0)
                   + after.get(metric_name(WAIT_QUEUE, i), 0.0)) / 2.0 for i in instances}
    total = sum(w for w in weights.values() if w > 0)
    if total <= 0:
        return shares
    return {i: unblamed * max(w, 0.0) / total for i, w in weights.items()}
