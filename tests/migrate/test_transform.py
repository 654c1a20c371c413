"""The per-source driver: findings carry location and old/new text; bad input never transforms."""

from __future__ import annotations

import pytest

from migrate.errors import SourceUnparseable
from migrate.findings import Level
from migrate.rules import RULES, select_rules
from migrate.transform import transform_source


def test_findings_carry_path_position_rule_and_texts() -> None:
    result = transform_source(
        "import os\nfrom streamparse import Bolt\n", "a.py", [RULES["imports"]]
    )
    [finding] = result.findings
    assert (finding.path, finding.line, finding.col) == ("a.py", 2, 1)
    assert finding.level is Level.INFO and finding.rule_id == "imports"
    assert finding.old == "from streamparse import Bolt"
    assert finding.new == "from compat.storm_api import Bolt"
    assert finding.headline().startswith("a.py:2:1: INFO [imports] ")


def test_unparseable_source_raises_with_location_and_py2_hint() -> None:
    with pytest.raises(SourceUnparseable) as info:
        transform_source("x = 1\nprint x\n", "old.py", [RULES["imports"]])
    assert info.value.line == 2
    assert "Python 2" in info.value.hint


def test_plain_syntax_error_gets_no_python2_hint() -> None:
    with pytest.raises(SourceUnparseable) as info:
        transform_source("def f(:\n", "bad.py", [RULES["imports"]])
    assert info.value.hint == ""


def test_skip_removes_a_rule_and_only_keeps_it() -> None:
    assert RULES["imports"] not in select_rules(skip=["imports"])
    assert select_rules(skip=list(RULES)) == []
    assert select_rules(only=["imports"]) == [RULES["imports"]]


def test_output_that_does_not_compile_is_refused() -> None:
    import libcst as cst

    from migrate.errors import OutputInvalid
    from migrate.rules.base import Rule

    class BreaksCode(Rule):
        RULE_ID = "breaks"
        DESCRIPTION = "Turns module-level pass into return (invalid outside a function)."

        def leave_Pass(self, original_node: cst.Pass, updated_node: cst.Pass) -> cst.Return:
            return cst.Return()

    with pytest.raises(OutputInvalid, match="does not parse"):
        transform_source("pass\n", "m.py", [BreaksCode])
