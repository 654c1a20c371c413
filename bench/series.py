"""Small helpers for the benches' time series (shared by their charts)."""

from __future__ import annotations


def moving_average(values: list[float], n: int) -> list[float]:
    """Each value averaged with the up to ``n - 1`` before it: a chart's smoothed line."""
    out = []
    for i in range(len(values)):
        window = values[max(0, i - n + 1):i + 1]
        out.append(sum(window) / len(window))
    return out
