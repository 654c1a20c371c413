"""Where things were written, for error messages.

An error about a graph node is only useful if it points at the line of the job that
built the node, and an error about a function at the line that defined it. Both are
cheap to record (a frame walk, a code object lookup), so every node records its call
site when it is created.
"""

from __future__ import annotations

import functools
import os
import sys
from types import FrameType
from typing import Any

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _short(path: str) -> str:
    """A path relative to the working directory when it is under it (shorter messages)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        return path
    return path if rel.startswith("..") else rel


def call_site() -> str:
    """``file:line`` of the innermost caller outside this package (the user's job code)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep):
            return f"{_short(filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


def describe_callable(fn: Any) -> str:
    """``name (file:line)`` for a function, partial, bound method or callable object."""
    target = fn
    while isinstance(target, functools.partial):
        target = target.func
    target = getattr(target, "__func__", target)  # bound methods
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    code = getattr(target, "__code__", None)
    if code is None and not isinstance(target, type):
        call = getattr(type(target), "__call__", None)  # noqa: B004 - we want its code
        code = getattr(call, "__code__", None)
        name = name or type(target).__qualname__
    if name is None:
        name = type(target).__qualname__
    if code is not None:
        return f"{name} ({_short(code.co_filename)}:{code.co_firstlineno})"
    return name
