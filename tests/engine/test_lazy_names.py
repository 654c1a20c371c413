"""A package whose names load on first use: each name from its own submodule, kept once
loaded, and a name it does not have refused as Python refuses any missing attribute."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_name_loads_its_own_submodule_only_and_stays():
    code = ("import sys, engine.common.process as p\n"
            "before = 'engine.common.process.supervisor' in sys.modules\n"
            "policy = p.RestartPolicy\n"
            "print(before, 'engine.common.process.supervisor' in sys.modules,\n"
            "      'RestartPolicy' in vars(p), policy.__module__)")
    assert run(code) == "False False True engine.common.process.restart_policy"


def test_a_name_the_package_lacks_is_an_attribute_error():
    import engine.common.plan as plan

    with pytest.raises(AttributeError, match="'engine.common.plan' has no attribute 'nope'"):
        plan.nope  # noqa: B018 - the read is the test
    assert not hasattr(plan, "nope")
