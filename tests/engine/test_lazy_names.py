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


def test_a_name_shared_with_a_submodule_is_refused_up_front():
    """Importing ``pkg.spawn`` binds the module to ``pkg.spawn``: a lazily exported
    ``spawn`` function would silently become the module."""
    from engine.common.lazy_names import names_on_first_use

    with pytest.raises(ValueError, match="^pkg: spawn would be shadowed by the submodule"):
        names_on_first_use("pkg", {"spawn": "spawn", "ProcessSpec": "spec"})


def test_every_package_exports_the_same_object_however_it_was_imported_first():
    code = ("import engine.common.process.spawn, engine.common.process.spec\n"
            "from engine.common.process import ProcessSpec, read_pid_file\n"
            "from engine.common.process.spawn import read_pid_file as direct\n"
            "print(read_pid_file is direct, callable(read_pid_file), ProcessSpec.__name__)")
    assert run(code) == "True True ProcessSpec"
