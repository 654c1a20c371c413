"""Custom grouping: a Python object chooses the tasks, in the emitting task.

Storm runs a ``CustomStreamGrouping`` and Heron's Python instance an ``ICustomGrouping``
where the tuple is emitted, not where it is routed: the emitter knows the values and
the grouping's own state (a round robin, a lookup table) lives with it. So do we: the
emitting task builds one of these per subscription, and sends the tasks it chose with
the batch as explicit destinations (the Stream Manager routes a custom subscription
like a direct one: nothing without them).

The plan names the grouping by ``InputDef.custom_grouping``, one of:

* ``module:QualName``: a class, built with no arguments in every emitting task;
* ``pickle:<base64>``: a pickled object (cloudpickle's, as heronpy's
  ``Grouping.custom(obj)`` makes it), unpickled in every emitting task, so each task
  starts from the object the topology defined.

The object has ``prepare(context, component, stream, target_tasks)`` (Storm's context
dict of the emitting task, the consuming component, the stream, its sorted task ids),
called once before the first tuple, and ``choose_tasks(values) -> list[int]``.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import pickle
from collections.abc import Sequence
from typing import Any

from engine.common.grouping.base import Grouping, GroupingError

PICKLE_PREFIX = "pickle:"


def describe(spec: str) -> str:
    """The grouping as a person reads it: its class path, or 'a pickled object'."""
    return "a pickled grouping object" if spec.startswith(PICKLE_PREFIX) else spec


def load_custom_grouping(spec: str) -> Any:
    """The grouping object ``spec`` names; ``GroupingError`` saying why when it cannot
    be had (a module that is not importable, an object that does not unpickle)."""
    if spec.startswith(PICKLE_PREFIX):
        try:
            raw = base64.b64decode(spec[len(PICKLE_PREFIX):], validate=True)
            obj = pickle.loads(raw)
        except (binascii.Error, ValueError) as exc:
            raise GroupingError(f"custom grouping: the pickled object is not base64: {exc}") \
                from None
        except Exception as exc:  # unpickling runs user code: any error is the user's
            raise GroupingError(f"custom grouping: the pickled object does not load here: "
                                f"{type(exc).__name__}: {exc}") from None
    else:
        module_name, _, qualname = spec.partition(":")
        if not module_name or not qualname:
            raise GroupingError(f"custom grouping {spec!r}: name the class as 'module:QualName'")
        try:
            obj = importlib.import_module(module_name)
            for part in qualname.split("."):
                obj = getattr(obj, part)
            obj = obj()
        except Exception as exc:
            raise GroupingError(f"custom grouping {spec!r} cannot be built: "
                                f"{type(exc).__name__}: {exc}") from None
    for method in ("prepare", "choose_tasks"):
        if not callable(getattr(obj, method, None)):
            raise GroupingError(f"custom grouping {describe(spec)} ({type(obj).__name__}) has "
                                f"no {method}() method")
    return obj


class CustomGrouping(Grouping):
    """One subscription's custom grouping in one emitting task."""

    #: the emitting task chooses (the Stream Manager cannot): its emits carry destinations
    chosen_by_emitter = True

    def __init__(self, tasks: Sequence[int], spec: str, consumer: str = "",
                 stream: str = "default") -> None:
        super().__init__(tasks)
        self.spec = spec
        self.consumer = consumer
        self.stream = stream
        self._valid = frozenset(self.tasks)
        self._grouping = load_custom_grouping(spec)
        self._context: dict | None = None
        self._prepared = False

    def bind(self, context: dict | None) -> None:
        """The emitting task's Storm context, given to ``prepare`` before the first tuple."""
        self._context = context

    def _prepare(self) -> None:
        try:
            self._grouping.prepare(self._context, self.consumer, self.stream, list(self.tasks))
        except Exception as exc:
            raise GroupingError(f"custom grouping {describe(self.spec)} of {self.consumer!r} "
                                f"failed in prepare(): {type(exc).__name__}: {exc}") from None
        self._prepared = True

    def choose(self, values: Sequence[Any], direct_task: int | None = None) -> Sequence[int]:
        if not self._prepared:
            self._prepare()
        try:
            chosen = self._grouping.choose_tasks(list(values))
        except Exception as exc:
            raise GroupingError(f"custom grouping {describe(self.spec)} of {self.consumer!r} "
                                f"raised in choose_tasks(): {type(exc).__name__}: {exc}") \
                from None
        if not isinstance(chosen, (list, tuple)):
            raise GroupingError(f"custom grouping {describe(self.spec)} of {self.consumer!r}: "
                                f"choose_tasks() returned {type(chosen).__name__}, not a list "
                                "of task ids")
        for task in chosen:
            if isinstance(task, bool) or not isinstance(task, int) or task not in self._valid:
                raise GroupingError(
                    f"custom grouping {describe(self.spec)} of {self.consumer!r}: "
                    f"choose_tasks() returned {task!r}, not one of its tasks "
                    f"{sorted(self._valid)}")
        return tuple(chosen)
