"""``KeyedWindow``: the key and window a keyed windowed result (join, reduce by key) is for."""

from __future__ import annotations

from typing import Any

from heronpy.streamlet.window import Window


class KeyedWindow:
    """A key within a window; results of keyed window operators are ``(KeyedWindow, value)``."""

    def __init__(self, key: Any, window: Window) -> None:
        if not isinstance(window, Window):
            raise RuntimeError("Window of KeyedWindow has to be of type Window")
        self._key = key
        self._window = window

    @property
    def key(self) -> Any:
        return self._key

    @property
    def window(self) -> Window:
        return self._window

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, KeyedWindow)
                and (self._key, self._window) == (other._key, other._window))

    def __hash__(self) -> int:
        return hash((repr(self._key), self._window))

    def __repr__(self) -> str:
        return f"KeyedWindow {{key: {self._key}, window: {self._window}}}"
