"""Which tuple path this process runs: the compiled extension or its pure-Python twin.

Decided once per process, at the first import of ``engine.fastpath``, from the
environment (which the engine passes unchanged to every process it starts):

* ``HERON_PURE_PYTHON=1``: the pure-Python twin, whatever is built;
* otherwise the compiled extension when it is built from the sources in this tree (it
  embeds the hash of its sources at build time, compared here with the hash of the
  sources beside it); a missing build gives the pure path with a note, a stale one the
  pure path with a warning (``StaleExtensionError``'s message);
* ``HERON_REQUIRE_COMPILED=1`` (the test suite's setting): a missing or stale extension
  raises instead, so nothing silently runs the slow path where the fast one was meant.

Every engine process logs the outcome (``log_tuple_path``) as its first log line.
"""

from __future__ import annotations

import importlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Mapping

from engine.fastpath.sources import EXTENSION_MODULE, sources_hash

PURE_ENV = "HERON_PURE_PYTHON"
REQUIRE_ENV = "HERON_REQUIRE_COMPILED"
PURE_MODULE = "engine.fastpath.codec"
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
    """The implementation chosen and why."""

    #: True: ``engine.fastpath._codec``; False: ``engine.fastpath.codec``
    compiled: bool
    module: ModuleType
    #: why this path (for the pure path: the variable, or what is wrong with the build)
    reason: str
    #: a compiled build exists but could not be used (stale): worth a warning
    degraded: bool = False

    def describe(self) -> str:
        """One line saying which path runs, for the first line of every process's log."""
        if self.compiled:
            return f"tuple path: compiled ({self.reason})"
        return f"tuple path: pure Python ({self.reason})"


def _flag(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in _TRUE


def select(environ: Mapping[str, str] | None = None) -> Selection:
    """Decide from ``environ`` (``os.environ`` by default) without caching; raises
    ``ExtensionMissingError`` or ``StaleExtensionError`` under ``HERON_REQUIRE_COMPILED``."""
    environ = os.environ if environ is None else environ
    require = _flag(environ, REQUIRE_ENV)
    if _flag(environ, PURE_ENV):
        return Selection(False, importlib.import_module(PURE_MODULE), f"{PURE_ENV}=1")
    try:
        compiled = importlib.import_module(EXTENSION_MODULE)
    except ImportError as exc:
        if require:
            raise ExtensionMissingError(
                f"{REQUIRE_ENV}=1 but the compiled tuple path ({EXTENSION_MODULE}) does not "
                f"load: {exc}; build it with `python3 -m pip install -e .` (needs gcc and "
                "python3-dev), or set HERON_PURE_PYTHON=1") from exc
        return Selection(False, importlib.import_module(PURE_MODULE),
                         "no compiled extension is built; `python3 -m pip install -e .` with "
                         "gcc and python3-dev builds it")
    built = getattr(compiled, "SOURCES_HASH", "")
    try:
        current = sources_hash(Path(__file__).resolve().parent)
    except FileNotFoundError:
        current = None  # the sources are not installed: nothing to be stale against
    if current is not None and built != current:
        error = StaleExtensionError(
            f"the compiled tuple path {compiled.__file__} was built from sources with hash "
            f"{built or 'unknown'}, the sources here hash to {current}: rebuild it with "
            "`python3 -m pip install -e .`")
        if require:
            raise error
        return Selection(False, importlib.import_module(PURE_MODULE),
                         f"{type(error).__name__}: {error}", degraded=True)
    checked = f"sources {built}" if current is not None else "sources not present, unchecked"
    return Selection(True, compiled, f"{EXTENSION_MODULE}, {checked}")


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
