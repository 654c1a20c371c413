"""Checks every platform runs before anything executes, and what must ship with the plan.

Planning a job (for any platform, the memory oracle included, so a job that works on
one works on all) validates it:

* the thing planned is a tail (Summingbird plans only ``TailProducer`` s);
* option names exist in the job;
* every function, semigroup and service a node carries can be pickled with
  cloudpickle, because that is how it travels to Spark workers and engine processes
  (a local, trusted path). A failure names the node, where it was written and where
  the function was defined.

While pickling, it records which modules the plan's code comes from, and which of those
a worker could not import by name (job code in a script directory or a test module,
rather than an installed package or the standard library). Platforms that ship code to
other processes register those modules with cloudpickle *by value* for the duration of
a run, so workers need nothing installed but this library.
"""

from __future__ import annotations

import functools
import importlib.metadata
import io
import os
import pickle
import sys
import sysconfig
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import cloudpickle

from .errors import PlanningError, UnpicklableFunctionError
from .graph import JobGraph
from .locations import describe_callable
from .options import Options, OptionsLike, check_names, normalize
from .producer import NodeKind, Producer


@dataclass(frozen=True)
class ValidatedJob:
    """A job that passed every check: its graph, its options and what ships by value."""

    graph: JobGraph
    options: Mapping[str, Options] = field(default_factory=dict)
    #: Names of modules whose code the plan uses and workers may not be able to import.
    modules_by_value: frozenset[str] = frozenset()


def shipped_objects(node: Producer) -> Iterator[tuple[str, Any]]:
    """What of ``node`` travels to workers: its function, semigroup and service."""
    if node.fn is not None:
        yield "function", node.fn
    if node.semigroup is not None:
        yield "semigroup", node.semigroup
    if node.service is not None:
        yield "service", node.service


# cloudpickle ships no types, so its Pickler is Any to the type checker
class _ModuleRecorder(cloudpickle.Pickler):  # type: ignore[misc]
    """A cloudpickle pickler that notes the module of every class/function/instance it meets."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.DEFAULT_PROTOCOL)
        self.modules: set[str] = set()

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
            module = getattr(obj, "__module__", None)
        else:
            module = getattr(type(obj), "__module__", None)
        if isinstance(module, str):
            self.modules.add(module)
        return super().reducer_override(obj)


def _pickle(obj: Any) -> set[str]:
    buffer = io.BytesIO()
    recorder = _ModuleRecorder(buffer)
    recorder.dump(obj)
    return recorder.modules


@functools.lru_cache(maxsize=1)
def _installed_top_levels() -> frozenset[str]:
    return frozenset(importlib.metadata.packages_distributions())


_SYSTEM_DIRS = tuple(os.path.abspath(p) + os.sep for p in {
    sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")})


def importable_by_workers(module_name: str) -> bool:
    """Whether a fresh interpreter of this installation can import ``module_name``.

    True for the standard library, installed distributions (this library included)
    and ``__main__`` (cloudpickle always ships ``__main__`` code by value).
    """
    if module_name == "__main__":
        return True
    top = module_name.partition(".")[0]
    if top in sys.builtin_module_names or top in sys.stdlib_module_names:
        return True
    if top in _installed_top_levels():
        return True
    module = sys.modules.get(module_name)
    path: str | None = getattr(module, "__file__", None)
    if not path:
        return False
    return os.path.abspath(path).startswith(_SYSTEM_DIRS)


def _registered() -> set[str]:
    return set(cloudpickle.list_registry_pickle_by_value())


def _check_node(node: Producer) -> set[str]:
    modules: set[str] = set()
    for what, obj in shipped_objects(node):
        try:
            modules |= _pickle(obj)
        except Exception as exc:  # cloudpickle raises many types (TypeError, PicklingError...)
            defined = describe_callable(obj) if what == "function" else repr(obj)
            raise UnpicklableFunctionError(
                f"cannot ship the {what} of node {node.describe()}: {defined} cannot be "
                f"pickled with cloudpickle ({type(exc).__name__}: {exc}). Everything a node "
                "runs travels with the plan to worker processes; create locks, files, "
                "connections and generators inside the function instead of capturing them"
            ) from exc
    return modules


def user_modules(graph: JobGraph) -> frozenset[str]:
    """Modules the plan's code needs that workers cannot import (to ship by value).

    Pickling again with each found module registered by value reveals the modules its
    functions reach in turn, until nothing new appears.
    """
    found: set[str] = set()
    added: list[str] = []
    already = _registered()
    try:
        while True:
            modules: set[str] = set()
            for node in graph:
                modules |= _check_node(node)
            new = {m for m in modules - found
                   if not importable_by_workers(m) and m in sys.modules}
            if not new:
                return frozenset(found)
            found |= new
            for name in sorted(new):
                if name not in already:
                    cloudpickle.register_pickle_by_value(sys.modules[name])
                    added.append(name)
    finally:
        for name in added:
            cloudpickle.unregister_pickle_by_value(sys.modules[name])


def validate(tail: Any, options: Mapping[str, OptionsLike] | None = None) -> ValidatedJob:
    """Check a job before any platform runs it (see the module docstring)."""
    if not isinstance(tail, Producer):
        raise PlanningError(f"only a job's tail can be planned; got {type(tail).__name__}")
    if not tail.is_tail:
        raise PlanningError(
            f"only a tail can be planned (a sum_by_key, a write, or an also ending in one); "
            f"the job ends in {tail.describe()}: add .write(sink) or .sum_by_key(store, monoid)")
    graph = JobGraph.of(tail)
    normalized = normalize(options)
    check_names(graph, normalized)
    for node in graph.of_kind(NodeKind.SUMMER):
        if not callable(getattr(node.store, "merge", None)):  # guarded at construction too
            raise PlanningError(f"the store of {node.describe()} has no merge(key, delta)")
    return ValidatedJob(graph, normalized, user_modules(graph))
