"""``--out-tree DIR``: a complete copy, changed files migrated, the rest byte for byte, the
input untouched; an existing or overlapping DIR is refused; a copy that cannot be completed
leaves no DIR at all."""

from __future__ import annotations

import builtins
import io
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import command
from tests.migrate.tree_snapshot import snapshot


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
    assert copied.pop("src/bolt.py") == ("file", b"from compat.storm_api import Bolt\n")
    kind, heron_yaml = copied.pop("heron.yaml")  # the config rule's new file
    assert kind == "file" and b"envs: {}" in heron_yaml
    before.pop("src/bolt.py")
    assert copied == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "proj"]  # no staging left


def test_existing_out_tree_is_refused(project: Path, tmp_path: Path) -> None:
    before = snapshot(project)
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(command, [str(project), "--out-tree", str(out)])
    assert result.exit_code == 2
    assert "exists; choose a new directory" in result.output
    assert list(out.iterdir()) == []
    assert snapshot(project) == before


def test_out_tree_inside_the_project_is_refused(project: Path) -> None:
    before = snapshot(project)
    result = CliRunner().invoke(command, [str(project), "--out-tree", str(project / "migrated")])
    assert result.exit_code == 2
    assert "overlaps the project" in result.output
    assert snapshot(project) == before and not (project / "migrated").exists()


def unreadable(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """Make ``target`` unreadable even for root (tests run as root, where chmod 000 does
    not stop a read): opening it raises EACCES, through ``open`` (shutil's copy) and
    ``io.open`` (``Path.read_bytes``), as chmod 000 does for anyone else."""
    os.chmod(target, 0)
    real = builtins.open

    def guarded_open(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and Path(file) == target:
            raise PermissionError(13, "Permission denied", str(target))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)


def test_unreadable_file_leaves_no_half_written_out_tree(project: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    secret = project / "src" / "secret.py"
    secret.write_text("from streamparse import Spout\n")
    before = snapshot(project)
    unreadable(monkeypatch, secret)
    out = tmp_path / "nested" / "out"
    result = CliRunner().invoke(command, [str(project), "--out-tree", str(out)])
    monkeypatch.undo()
    os.chmod(secret, 0o644)
    assert result.exit_code == 2
    assert "failed: src/secret.py: cannot read: Permission denied" in result.output
    assert f"error: --out-tree {out} not written: cannot copy src/secret.py" in result.output
    assert "Permission denied" in result.output
    assert not out.exists() and not (tmp_path / "nested").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj"]
    assert snapshot(project) == before


def test_named_pipe_is_not_read_and_leaves_no_out_tree(project: Path, tmp_path: Path) -> None:
    os.mkfifo(project / "src" / "events.py")  # reading it would wait for a writer forever
    before = snapshot(project)
    out = tmp_path / "out"
    result = CliRunner().invoke(command, [str(project), "--out-tree", str(out)])
    assert result.exit_code == 2
    assert "failed: src/events.py: not a regular file" in result.output
    assert "cannot copy src/events.py" in result.output and "named pipe" in result.output
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj"]
    assert snapshot(project) == before
