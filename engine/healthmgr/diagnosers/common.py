"""What Heron's diagnosers share: the single component in backpressure, symptoms by kind;
and what tells a slow instance from a hot key's (execute latency)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

from engine.healthmgr.records import Symptom, SymptomKind
from engine.healthmgr.sensors import ComponentMetrics, Measurements


def of_kind(symptoms: Iterable[Symptom], kind: SymptomKind) -> dict[str, Symptom]:
    """Symptoms of one kind by component."""
    return {s.component: s for s in symptoms if s.kind == kind}


def single_back_pressure(symptoms: Iterable[Symptom]) -> Symptom | None:
    """The backpressure symptom when exactly one component has one, else None."""
    found = list(of_kind(symptoms, SymptomKind.BACK_PRESSURE).values())
    return found[0] if len(found) == 1 else None


def component_in_back_pressure(symptoms: Sequence[Symptom], measurements: Measurements,
                               *also: SymptomKind) -> ComponentMetrics | None:
    """The measured component when it is the only one in backpressure and also shows
    every symptom kind in ``also``; None otherwise (Heron's diagnosers' common start)."""
    bp = single_back_pressure(symptoms)
    if bp is None or any(bp.component not in of_kind(symptoms, kind) for kind in also):
        return None
    return measurements.components.get(bp.component)


#: a slow instance takes more than this many times as long per tuple as its peers do
#: (the median of their mean execute latencies); a hot key's instance does not
SLOW_LATENCY_RATIO = 2.0


def starved_peers(component: ComponentMetrics, chosen: set[str],
                  latency: dict[str, float]) -> tuple[str, ...]:
    """``slow_by_latency`` when no other instance executed a tuple in the window: the
    candidates that did, if the component receives no fields grouping. Under byte credits
    the tuples of a slow instance wait in its Stream Manager's queue; while that drains
    from the high watermark to the low one the spouts stay paused, for whole windows when
    it drains slowly, so its shuffle-grouped peers get nothing and execute nothing. A hot
    key cannot leave them with nothing: only a fields grouping sends every tuple to one
    instance, and then which it is stays unknown (none)."""
    if component.view.fields_grouped:
        return ()
    rates = component.means("execute_rate")
    others = [i for i in component.instances if i not in chosen]
    if not others or any(rates.get(i, 0.0) > 0.0 for i in others):
        return ()
    return tuple(sorted(i for i in chosen if i in latency))


def slow_by_latency(component: ComponentMetrics, candidates: Iterable[str]) -> tuple[str, ...]:
    """Of ``candidates`` (the instances whose queues stand out), those whose mean execute
    latency over the window is more than :data:`SLOW_LATENCY_RATIO` times the median of
    the other instances' (those with data). Without latency data, none: no evidence.

    This tells a slow instance from a hot key when the rates are skewed too. Heron reads
    "largest queue and highest rate" as data skew, assuming a slow instance holds its
    shuffle-grouped peers to its pace. It does only on average: while its queue drains
    from the high to the low watermark the spouts are stopped, and its peers, with
    nothing queued, execute nothing; with cycles as long as the window (a slow instance
    drains slowly), the peers' rates over the window fall far below its own. A hot
    key's instance gets more tuples and takes as long per tuple as its peers; a slow
    instance takes longer per tuple."""
    latency = component.means("execute_latency")
    chosen = set(candidates)
    peers = sorted(v for i, v in latency.items() if i not in chosen)
    if not peers:
        return starved_peers(component, chosen, latency)
    median = statistics.median(peers)
    return tuple(sorted(i for i in chosen if i in latency
                        and latency[i] > SLOW_LATENCY_RATIO * median))
