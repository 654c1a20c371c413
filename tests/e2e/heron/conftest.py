"""Fixtures of the heron engine's end-to-end tests."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(scope="module")
def module_imports():
    """``isolated_imports`` for module-scoped runs: undo the sys.path entries and modules
    a fixture project's loading added."""
    saved_path = list(sys.path)
    saved_modules = set(sys.modules)
    yield
    sys.path[:] = saved_path
    for name in set(sys.modules) - saved_modules:
        del sys.modules[name]
