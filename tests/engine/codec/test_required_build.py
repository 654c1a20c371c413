"""The component API's equivalence tests (test_api_equivalence.py) under
``HERON_REQUIRE_COMPILED=1`` with no usable compiled ``engine.instance._api``: they fail,
never skip, so a broken build of that module is never a silent skip; without the variable
they are skipped (nothing to compare on such a machine). Each run is a fresh pytest in
its own interpreter, where the compiled module does not import, with
``HERON_PURE_PYTHON=1`` as in the suite's pure-path runs: the process itself then never
loads a compiled module, so only the tests' own check of the build can catch it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TESTS = "tests/engine/codec/test_api_equivalence.py"
#: pytest in an interpreter where ``engine.instance._api`` cannot be imported
RUN = """
import sys
import pytest

class NoBuild:
    def find_spec(self, name, path=None, target=None):
        if name == "engine.instance._api":
            raise ImportError("engine.instance._api is not built (removed by the test)")
        return None

sys.meta_path.insert(0, NoBuild())
sys.exit(pytest.main(sys.argv[1:]))
"""


def run_without_build(**env: str) -> subprocess.CompletedProcess:
    child = {k: v for k, v in os.environ.items()
             if k not in ("HERON_PURE_PYTHON", "HERON_REQUIRE_COMPILED")}
    child.update(env, HERON_PURE_PYTHON="1")
    return subprocess.run([sys.executable, "-c", RUN, TESTS, "-q", "-p", "no:cacheprovider"],
                          cwd=REPO, env=child, capture_output=True, text=True, timeout=120)


def test_a_missing_api_build_fails_the_equivalence_tests_when_it_is_required() -> None:
    out = run_without_build(HERON_REQUIRE_COMPILED="1")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "skipped" not in out.stdout.splitlines()[-1], out.stdout
    assert "HERON_REQUIRE_COMPILED=1: ExtensionMissingError" in out.stdout
    assert "engine.instance._api" in out.stdout


def test_a_missing_api_build_skips_the_equivalence_tests_when_not_required() -> None:
    out = run_without_build()
    assert out.returncode == 0, out.stdout + out.stderr
    last = out.stdout.splitlines()[-1]
    assert "skipped" in last and "failed" not in last and "error" not in last, out.stdout
