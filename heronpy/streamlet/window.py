"""``Window``: the time span a windowed operator's result belongs to."""

from __future__ import annotations


class Window:
    """A window's start and end (epoch seconds) as given to windowed results."""

    def __init__(self, start_time: float, end_time: float) -> None:
        self._start_time = start_time
        self._end_time = end_time

    @property
    def start_time(self) -> float:
        return self._start_time

    @property
    def end_time(self) -> float:
        return self._end_time

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Window)
                and (self._start_time, self._end_time) == (other._start_time, other._end_time))

    def __hash__(self) -> int:
        return hash((self._start_time, self._end_time))

    def __repr__(self) -> str:
        return f"Window {{start_time: {self._start_time}, end_time: {self._end_time}}}"
