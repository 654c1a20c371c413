"""Where a streamparse or pystorm module lives in ``compat.storm_api``.

The mapping is structural (``streamparse.X`` and ``pystorm.X`` become ``compat.storm_api.X``;
``streamparse.storm`` is streamparse's re-export of pystorm, so it collapses onto the top
level) and is checked against the modules that really exist, so a module we do not
provide is reported instead of being rewritten into an import that would fail.
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import cache
from typing import TypeGuard

TARGET = "compat.storm_api"
SOURCE_ROOTS = frozenset({"streamparse", "pystorm"})


@cache
def module_exists(dotted: str) -> bool:
    """True when ``dotted`` names an importable module (no user code is run, only ours)."""
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError, AttributeError):
        return False


def is_source_module(dotted: str | None) -> TypeGuard[str]:
    """True for ``streamparse``, ``pystorm`` and anything under them."""
    return dotted is not None and dotted.split(".")[0] in SOURCE_ROOTS


def target_module(source: str) -> str | None:
    """The ``compat.storm_api`` module matching the source module, or None when we have none."""
    parts = source.split(".")
    if parts[0] not in SOURCE_ROOTS:
        return None
    rest = parts[1:]
    if parts[0] == "streamparse" and rest[:1] == ["storm"]:
        rest = rest[1:]
    target = ".".join([TARGET, *rest])
    return target if module_exists(target) else None


@cache
def has_name(module: str, name: str) -> bool:
    """True when ``from module import name`` works on our side."""
    if module_exists(f"{module}.{name}"):
        return True
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


def target_dotted(source: str) -> tuple[str, str, str] | None:
    """Map a dotted use such as ``streamparse.storm.Bolt.spec``.

    Returns ``(new dotted name, target module, first attribute after it or "")`` using the
    longest prefix that is a module we provide, or None when no prefix maps.
    """
    parts = source.split(".")
    for i in range(len(parts), 0, -1):
        module = target_module(".".join(parts[:i]))
        if module is not None:
            rest = parts[i:]
            return ".".join([module, *rest]), module, (rest[0] if rest else "")
    return None
