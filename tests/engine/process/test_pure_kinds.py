"""``HERON_PURE_PYTHON_KINDS``: engine.common.process.spawn starts the listed kinds of process
with ``HERON_PURE_PYTHON=1`` and leaves the others as they are (a mixed run)."""

from __future__ import annotations

import sys

import pytest

from engine.common.process.spawn import PURE_KINDS_ENV, process_kind, pure_kinds, spawn
from engine.common.process.spec import ProcessSpec
from engine.config.errors import ConfigError


def test_process_names_map_to_kinds():
    assert process_kind("heron-tmanager") == "tmanager"
    assert process_kind("heron-healthmgr") == "healthmgr"
    assert process_kind("stmgr-2") == "stmgr"
    assert process_kind("metricsmgr-1") == "metricsmgr"
    assert process_kind("executor-0") == "executor"
    assert process_kind("container_1_count_bolt_3") == "instance"
    assert process_kind("scheduler") == "scheduler"
    assert process_kind("something-else") is None


def test_the_kinds_are_parsed_and_a_typo_is_refused():
    assert pure_kinds({}) == set()
    assert pure_kinds({PURE_KINDS_ENV: " instance , stmgr,"}) == {"instance", "stmgr"}
    with pytest.raises(ConfigError, match="unknown process kind.*instances.*choose from"):
        pure_kinds({PURE_KINDS_ENV: "instances"})


@pytest.mark.parametrize("name, pure", [("container_1_word_spout_2", "1"), ("stmgr-1", None)])
def test_spawn_sets_pure_python_for_the_listed_kinds_only(name, pure, tmp_path):
    out = tmp_path / "env.txt"
    code = ("import os, sys; open(sys.argv[1], 'w').write(repr((os.environ.get("
            "'HERON_PURE_PYTHON'), os.environ.get('HERON_PURE_PYTHON_KINDS'))))")
    env = {"PATH": "/usr/bin:/bin", PURE_KINDS_ENV: "instance"}
    spec = ProcessSpec(name=name, argv=[sys.executable, "-c", code, str(out)],
                       log_path=tmp_path / "log", env=env)
    assert spawn(spec).wait(timeout=30) == 0
    # the variable itself goes on, so an executor applies it to what it starts
    assert out.read_text() == repr((pure, "instance"))
