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
    assert (
        "    old: from streamparse import Bolt\n    new: from compat.storm_api import Bolt" in text
    )
    assert "cli_use.py:1:1: ERROR [imports]" in text
    assert "hint: looks like Python 2" in text


def test_json_report_matches_the_text_one(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    report = tmp_path / "report.json"
    CliRunner().invoke(command, [str(project), "--report-json", str(report)])
    data = json.loads(report.read_text())
    assert data["summary"] == {"scanned": 4, "unchanged": 2, "changed": 1, "failed": 1,
                               "created": 0, "info": 1, "warning": 0, "error": 1}
    assert {f["path"]: f["status"] for f in data["files"]}["old.py"] == "failed"
    [info] = [f for f in data["findings"] if f["level"] == "INFO"]
    assert info["new"] == "from compat.storm_api import Bolt"


def test_counts_are_of_distinct_input_files_with_new_files_apart(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    (project / "fabfile.py").write_text("def pre_submit(t, e, c, o):\n    pass\n")
    (project / "config.json").write_text('{"envs": {}}\n')
    (project / "virtualenvs").mkdir()
    (project / "virtualenvs" / "wc.txt").write_text("streamparse\n")
    report, report_json = tmp_path / "report.txt", tmp_path / "report.json"
    CliRunner().invoke(command, [str(project), "--report", str(report),
                                 "--report-json", str(report_json)])
    # 4 sources + fabfile.py (read by the Python pass and the cli rule) + config.json and
    # virtualenvs/wc.txt (read to make heron.yaml and requirements.txt)
    text = report.read_text()
    assert "Scanned 7 files: 1 changed, 5 unchanged, 1 failed to parse or read." in text
    assert "Created 2 new files: heron.yaml, requirements.txt." in text
    data = json.loads(report_json.read_text())
    assert {k: data["summary"][k] for k in ("scanned", "changed", "unchanged", "failed",
                                            "created")} == \
        {"scanned": 7, "changed": 1, "unchanged": 5, "failed": 1, "created": 2}
    paths = [f["path"] for f in data["files"]]
    assert len(paths) == len(set(paths)) == 9
    created = {f["path"] for f in data["files"] if f["created"]}
    assert created == {"heron.yaml", "requirements.txt"}
