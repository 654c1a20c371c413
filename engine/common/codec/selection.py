"""Which tuple path this process runs: the compiled extension or its pure-Python twin.

Decided once per process, at the first import of ``engine.common.codec``, from the
environment (which the engine passes unchanged to every process it starts):

* ``HERON_PURE_PYTHON=1``: the pure-Python twin, whatever is built;
* otherwise the compiled extensions (every module of ``sources.EXTENSIONS``) when they
  are built from the sources in this tree (each embeds the hash of its sources at build
  time, compared here with the hash of the sources beside it); a missing build gives the
  pure path with a note, a stale one the pure path with a warning
  (``StaleExtensionError``'s message);
* ``HERON_REQUIRE_COMPILED=1`` (the test suite's setting): a missing or stale extension
  raises instead, so nothing silently runs the slow path where the fast one was meant.

Every engine process logs the outcome (``log_tuple_path``) as its first log line.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType

from engine.common.codec.sources import (
    ENGINE_DIR,
    EXTENSION_MODULE,
    EXTENSIONS,
    PURE_TWINS,
    sources_hash,
)

PURE_ENV = "HERON_PURE_PYTHON"
REQUIRE_ENV = "HERON_REQUIRE_COMPILED"
PURE_MODULE = PURE_TWINS[EXTENSION_MODULE]
_TRUE = {"1", "true", "yes", "on"}


class TuplePathError(RuntimeError):
    """The tuple path asked for cannot be used."""


class ExtensionMissingError(TuplePathError):
    """The compiled extension is not built (or does not load) and
    ``HERON_REQUIRE_COMPILED=1`` requires it."""


class StaleExtensionError(TuplePathError):
    """The compiled extension was built from other sources than the ones in this tree:
    it would run code that is no longer the project's. Rebuild it with
    ``python3 -m pip install -e .``."""


@dataclass(frozen=True)
class Selection:
    """The implementation chosen and why: every compiled module, or every pure twin,
    never a mix (a process runs one path)."""

    #: True: the compiled modules (``engine.common.codec._codec``, ...); False: their twins
    compiled: bool
    #: the tuple codec (``engine.common.codec._codec`` or ``.codec``)
    module: ModuleType
    #: why this path (for the pure path: the variable, or what is wrong with the build)
    reason: str
    #: a compiled build exists but could not be used (stale): worth a warning
    degraded: bool = False
    #: every selected module by its short name: ``codec`` (the tuple codec), ``api``
    #: (an instance's component API path), ``routing``, ``xor``, ``acking`` (the
    #: Stream Manager's)
    modules: Mapping[str, ModuleType] = field(default_factory=dict)

    def describe(self) -> str:
        """One line saying which path runs, for the first line of every process's log."""
        if self.compiled:
            return f"tuple path: compiled ({self.reason})"
        return f"tuple path: pure Python ({self.reason})"


def _flag(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in _TRUE


def _short(module: str) -> str:
    """``engine.stmgr._routing`` -> ``routing``: the name callers ask a selection for."""
    return module.rsplit(".", 1)[-1].lstrip("_")


def _pure(reason: str, degraded: bool = False) -> Selection:
    modules = {_short(name): importlib.import_module(name) for name in PURE_TWINS.values()}
    return Selection(False, modules["codec"], reason, degraded, modules)


def select(environ: Mapping[str, str] | None = None) -> Selection:
    """Decide from ``environ`` (``os.environ`` by default) without caching; raises
    ``ExtensionMissingError`` or ``StaleExtensionError`` under ``HERON_REQUIRE_COMPILED``.
    The compiled path needs every compiled module (``sources.EXTENSIONS``) built from
    the sources beside it; one missing or stale module gives the pure path for all."""
    environ = os.environ if environ is None else environ
    require = _flag(environ, REQUIRE_ENV)
    if _flag(environ, PURE_ENV):
        return _pure(f"{PURE_ENV}=1")
    modules: dict[str, ModuleType] = {}
    hashes: list[str] = []
    checked = True
    for name in EXTENSIONS:
        try:
            compiled = importlib.import_module(name)
        except ImportError as exc:
            if require:
                raise ExtensionMissingError(
                    f"{REQUIRE_ENV}=1 but the compiled tuple path ({name}) does not "
                    f"load: {exc}; build it with `python3 -m pip install -e .` (needs gcc and "
                    "python3-dev), or set HERON_PURE_PYTHON=1") from exc
            return _pure("no compiled extension is built; `python3 -m pip install -e .` with "
                         "gcc and python3-dev builds it")
        built = getattr(compiled, "SOURCES_HASH", "")
        try:
            current = sources_hash(ENGINE_DIR, name)
        except FileNotFoundError:
            current = None  # the sources are not installed: nothing to be stale against
        if current is not None and built != current:
            error = StaleExtensionError(
                f"the compiled tuple path {compiled.__file__} was built from sources with hash "
                f"{built or 'unknown'}, the sources here hash to {current}: rebuild it with "
                "`python3 -m pip install -e .`")
            if require:
                raise error
            return _pure(f"{type(error).__name__}: {error}", degraded=True)
        checked = checked and current is not None
        modules[_short(name)] = compiled
        hashes.append(built)
    sources = f"sources {', '.join(hashes)}" if checked else "sources not present, unchecked"
    return Selection(True, modules["codec"], f"{', '.join(EXTENSIONS)}, {sources}",
                     modules=modules)


_selected: Selection | None = None


def selected() -> Selection:
    """The process's selection, made on first use and kept."""
    global _selected
    if _selected is None:
        _selected = select()
    return _selected


def log_tuple_path(logger: logging.Logger | None = None) -> Selection:
    """Log which tuple path this process runs (call it right after logging is set up, so
    it is the process's first log line): a warning when a built extension was refused."""
    selection = selected()
    logger = logger or logging.getLogger("heron.fastpath")
    logger.log(logging.WARNING if selection.degraded else logging.INFO, "%s",
               selection.describe())
    return selection
