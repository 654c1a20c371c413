"""The two implementations of the tuple path, for tests that compare them.

Without ``HERON_REQUIRE_COMPILED=1`` a machine with no compiled build skips the
comparisons (there is nothing to compare); with it (``scripts/test.sh``) a missing or
stale build fails them instead, so a broken build is never a silent skip."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

from engine.fastpath import codec as pure_codec
from engine.fastpath import stmgr as pure_stmgr_module
from engine.fastpath.selection import REQUIRE_ENV, TuplePathError, select


@pytest.fixture(scope="session")
def compiled() -> ModuleType:
    """``engine.fastpath._codec``, checked fresh against the sources in the tree."""
    try:
        select({REQUIRE_ENV: "1"})
    except TuplePathError as exc:
        if os.environ.get(REQUIRE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
            pytest.fail(f"{REQUIRE_ENV}=1: {type(exc).__name__}: {exc}")
        pytest.skip(f"no usable compiled tuple path here: {exc}")
    return importlib.import_module("engine.fastpath._codec")


@pytest.fixture(scope="session")
def pure() -> ModuleType:
    return pure_codec


@pytest.fixture(scope="session")
def compiled_stmgr(compiled: ModuleType) -> ModuleType:
    """``engine.fastpath._stmgr`` (the selection checked every compiled module fresh)."""
    return importlib.import_module("engine.fastpath._stmgr")


@pytest.fixture(scope="session")
def pure_stmgr() -> ModuleType:
    return pure_stmgr_module
