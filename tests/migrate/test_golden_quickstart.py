"""Golden project: the streamparse quickstart (``sparse quickstart demo``, rendered from
streamparse's bootstrap templates) migrated out of tree must equal the checked-in
expected tree and report, byte for byte. Regenerate after an intended change with
``heron-migrate golden/quickstart/input --out-tree NEW --report golden/quickstart/report.txt``
(NEW a directory that does not exist yet), replace golden/quickstart/expected with NEW
if the tree changed, and review the diff."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from migrate.cli import command
from tests.migrate.tree_snapshot import snapshot as tree

GOLDEN = Path(__file__).resolve().parent / "golden" / "quickstart"


def test_quickstart_migrates_to_the_expected_tree_and_report(tmp_path: Path) -> None:
    before = tree(GOLDEN / "input")
    out, report = tmp_path / "out", tmp_path / "report.txt"
    result = CliRunner().invoke(command, [str(GOLDEN / "input"), "--out-tree", str(out),
                                          "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert tree(out) == tree(GOLDEN / "expected")
    assert report.read_text() == (GOLDEN / "report.txt").read_text()
    assert tree(GOLDEN / "input") == before


def test_expected_tree_is_already_migrated() -> None:
    result = CliRunner().invoke(command, ["--check",
                                          str(GOLDEN / "expected")])
    assert result.exit_code == 0, result.output
