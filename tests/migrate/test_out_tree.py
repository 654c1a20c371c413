"""``--out-tree DIR``: a complete copy, changed files migrated, the rest byte for byte, the
input untouched; an existing or overlapping DIR is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import command


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "bolt.py").write_text("from streamparse import Bolt\n")
    (root / "src" / "old.py").write_text("print 'x'\n")
    (root / "src" / "latin.py").write_bytes(b"# caf\xe9\n")
    (root / "config.json").write_text('{"envs": {}}\n')
    return root


def test_out_tree_migrates_a_copy_and_copies_the_rest_byte_for_byte(project: Path,
                                                                     tmp_path: Path) -> None:
    before = snapshot(project)
    out = tmp_path / "out"
    result = CliRunner().invoke(command, [str(project), "--out-tree", str(out)])
    assert result.exit_code == 2  # old.py and latin.py failed, and are listed
    assert "failed: src/old.py:1:" in result.output and "not UTF-8" in result.output
    assert snapshot(project) == before
    copied = snapshot(out)
    assert copied.pop("src/bolt.py") == b"from compat.storm_api import Bolt\n"
    assert b"envs: {}" in copied.pop("heron.yaml")  # the config rule's new file
    before.pop("src/bolt.py")
    assert copied == before


def test_existing_out_tree_is_refused(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(command, [str(project), "--out-tree", str(out)])
    assert result.exit_code == 2
    assert "exists; choose a new directory" in result.output
    assert list(out.iterdir()) == []


def test_out_tree_inside_the_project_is_refused(project: Path) -> None:
    before = snapshot(project)
    result = CliRunner().invoke(command, [str(project), "--out-tree", str(project / "migrated")])
    assert result.exit_code == 2
    assert "overlaps the project" in result.output
    assert snapshot(project) == before and not (project / "migrated").exists()
