"""``WindowConfig``: a time window (duration and slide, whole seconds), as heronpy's."""

from __future__ import annotations

import datetime

Seconds = int | datetime.timedelta


def _as_timedelta(value: Seconds, what: str) -> datetime.timedelta:
    if isinstance(value, bool):
        raise RuntimeError(f"{what} has to be of type datetime.timedelta")
    if isinstance(value, int):
        return datetime.timedelta(seconds=value)
    if not isinstance(value, datetime.timedelta):
        raise RuntimeError(f"{what} has to be of type datetime.timedelta")
    return value


class WindowConfig:
    """A sliding (slide < duration) or tumbling (slide == duration) time window."""

    def __init__(self, window_duration: datetime.timedelta,
                 slide_interval: datetime.timedelta) -> None:
        self._window_duration = window_duration
        self._slide_interval = slide_interval
        if window_duration.microseconds > 0 or slide_interval.microseconds > 0:
            raise RuntimeError("Python Windowing curently only supports second resolution")
        if window_duration.total_seconds() <= 0 or slide_interval.total_seconds() <= 0:
            raise RuntimeError("Window Duration and Slide Interval have to be positive")
        if slide_interval > window_duration:
            raise RuntimeError("Slide Interval has to be <= Window Duration")

    @staticmethod
    def create_tumbling_window(window_duration: Seconds) -> WindowConfig:
        """Back-to-back windows: every element is in exactly one."""
        duration = _as_timedelta(window_duration, "Window Duration")
        return WindowConfig(duration, duration)

    @staticmethod
    def create_sliding_window(window_duration: Seconds, slide_interval: Seconds) -> WindowConfig:
        """A window of ``window_duration`` closed every ``slide_interval``."""
        return WindowConfig(_as_timedelta(window_duration, "Window Duration"),
                            _as_timedelta(slide_interval, "Slide Interval"))

    def _seconds(self) -> tuple[int, int]:
        """(duration, slide) in whole seconds, as the window bolts' config holds them."""
        return (int(self._window_duration.total_seconds()),
                int(self._slide_interval.total_seconds()))
