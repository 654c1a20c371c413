"""``--report`` and ``--report-json``: summary counts, then every finding with old/new text."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from migrate.cli import command


def make_project(root: Path) -> Path:
    root.mkdir()
    (root / "bolt.py").write_text("from streamparse import Bolt\n")
    (root / "plain.py").write_text("import os\n")
    (root / "old.py").write_text("print 'x'\n")
    (root / "cli_use.py").write_text("import streamparse.cli\n")
    return root


def test_text_report_has_summary_findings_and_failures(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    report = tmp_path / "report.txt"
    result = CliRunner().invoke(command, [str(project), "--report", str(report)])
    assert result.exit_code == 2
    text = report.read_text()
    assert "Scanned 4 files: 1 changed, 2 unchanged, 1 failed to parse or read." in text
    assert "Detected 1 issues that require attention (1 errors, 0 warnings)." in text
    assert "bolt.py:1:1: INFO [imports] import moved from streamparse to compat.storm_api" in text
    assert "    old: from streamparse import Bolt\n    new: from compat.storm_api import Bolt" in text
    assert "cli_use.py:1:1: ERROR [imports]" in text
    assert "hint: looks like Python 2" in text


def test_json_report_matches_the_text_one(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    report = tmp_path / "report.json"
    CliRunner().invoke(command, [str(project), "--report-json", str(report)])
    data = json.loads(report.read_text())
    assert data["summary"] == {"scanned": 4, "unchanged": 2, "changed": 1, "failed": 1,
                               "info": 1, "warning": 0, "error": 1}
    assert {f["path"]: f["status"] for f in data["files"]}["old.py"] == "failed"
    [info] = [f for f in data["findings"] if f["level"] == "INFO"]
    assert info["new"] == "from compat.storm_api import Bolt"
