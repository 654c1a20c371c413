"""heronpy's ``Grouping.custom(...)`` as the engines run it (``engine.common.grouping.custom``).

heronpy serializes the user's ``ICustomGrouping`` (or its class path) with cloudpickle;
Heron's Python instance unpickles it in every emitting task and calls
``prepare(context, component, stream, target_tasks)`` with heronpy's context, then
``choose_tasks(values)`` per tuple. The engines run a Python grouping object in the
emitting task too, but prepare it with Storm's context dict; the adapter here gives the
user's object heronpy's context instead, so a grouping that reads
``context.get_task_id()`` or ``get_component_tasks`` works unchanged.

The object is checked at load (it unpickles, a class path imports) and pickled again
with the adapter: by value when its class lives in a topology file instances import
under a name ``sys.path`` does not resolve (a file run as ``__main__`` or loaded by
path), by reference otherwise.
"""

from __future__ import annotations

import base64
import importlib
import importlib.machinery
import sys
from pathlib import Path
from typing import Any

import cloudpickle

from heronpy.api.component.context import MetricsRegistry, TopologyContextImpl
from heronpy.api.serializer import default_serializer

PICKLE_PREFIX = "pickle:"  # engine.common.grouping.custom's


class CustomGroupingError(ValueError):
    """``Grouping.custom(...)`` names something that cannot run: the message says what."""


class HeronpyCustomGrouping:
    """The engines' grouping object around a heronpy ``ICustomGrouping``."""

    def __init__(self, grouping: Any) -> None:
        self.grouping = grouping

    def prepare(self, context: dict[str, Any] | None, component: str, stream: str,
                target_tasks: list[int]) -> None:
        heron_context = TopologyContextImpl({}, dict(context or {}),
                                           MetricsRegistry(lambda name, value: None))
        self.grouping.prepare(heron_context, component, stream, target_tasks)

    def choose_tasks(self, values: list[Any]) -> list[int]:
        tasks: list[int] = self.grouping.choose_tasks(values)  # the user's grouping's answer
        return tasks


def _from_class_path(path: str, where: str) -> Any:
    module_name, _, class_name = path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
        return cls()
    except Exception as exc:
        raise CustomGroupingError(f"{where}: Grouping.custom({path!r}): the class cannot be "
                                  f"built: {type(exc).__name__}: {exc}") from None


def _importable_by_name(module_name: str) -> bool:
    """Whether a fresh process finds ``module_name`` on ``sys.path`` as the same file."""
    module = sys.modules.get(module_name)
    if module_name == "__main__" or module is None:
        return False
    try:
        found = importlib.machinery.PathFinder.find_spec(module_name.partition(".")[0])
    except (ImportError, ValueError):
        return False
    if found is None:
        return False
    if "." in module_name:
        return True
    origin = getattr(module, "__file__", None)
    return bool(origin and found.origin
                and Path(found.origin).resolve() == Path(origin).resolve())


def engine_spec(serialized: bytes, where: str) -> str:
    """The engines' ``pickle:<base64>`` spec for heronpy's serialized custom grouping."""
    try:
        grouping = default_serializer.deserialize(serialized)
    except Exception as exc:
        raise CustomGroupingError(f"{where}: Grouping.custom(...) holds an object that does "
                                  f"not unpickle: {type(exc).__name__}: {exc}") from None
    if isinstance(grouping, str):
        grouping = _from_class_path(grouping, where)
    for method in ("prepare", "choose_tasks"):
        if not callable(getattr(grouping, method, None)):
            raise CustomGroupingError(f"{where}: Grouping.custom(...) holds a "
                                      f"{type(grouping).__name__}, which has no {method}()")
    module = sys.modules.get(type(grouping).__module__)
    by_value = (module is not None and module.__name__ != "__main__"  # by value anyway
                and not _importable_by_name(module.__name__))
    if by_value:
        cloudpickle.register_pickle_by_value(module)
    try:
        payload = cloudpickle.dumps(HeronpyCustomGrouping(grouping))
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)
    return PICKLE_PREFIX + base64.b64encode(payload).decode("ascii")
