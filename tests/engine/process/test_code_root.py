"""A process the engine starts imports the same engine as the process that started it,
even when that one runs from a checkout that is not pip-installed (``python
bench/wordcount.py``): the child's ``PYTHONPATH`` ends with this code's root."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import engine
from engine.common.process import ProcessSpec
from engine.common.process.spawn import spawn


def test_a_child_finds_the_engine_without_an_installed_copy(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path)  # the user's own entries stay, first
    log = tmp_path / "child.log"
    # -S: no site-packages, so an installed (or editable) copy cannot be what it finds
    spec = ProcessSpec("child", [sys.executable, "-S", "-c",
                                 "import engine, os; print(engine.__file__); "
                                 "print(os.environ['PYTHONPATH'])"],
                       log, env=env, cwd=tmp_path)
    proc = spawn(spec)
    assert proc.wait(30) == 0, log.read_text()
    found, pythonpath = log.read_text().split()
    assert Path(found) == Path(engine.__file__)
    assert pythonpath.split(os.pathsep)[0] == str(tmp_path)
