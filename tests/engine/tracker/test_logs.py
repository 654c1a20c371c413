"""engine/tools/tracker/logs.py on its own: only regular files directly inside the logs folder,
checked again when opened (docs/security.md, "Tracker logs")."""

from __future__ import annotations

import os

import pytest

from engine.tools.tracker import logs
from engine.tools.tracker.errors import BadParameter, NotFound


@pytest.fixture
def working_dir(tmp_path):
    (tmp_path / "work" / "logs").mkdir(parents=True)
    (tmp_path / "work" / "logs" / "stmgr-1.log").write_text("a\nb\n")
    return tmp_path / "work"


def test_a_file_swapped_for_a_symlink_after_the_listing_is_not_read(working_dir, tmp_path):
    found = logs.find_log("t", working_dir, "stmgr-1.log")
    outside = tmp_path / "outside"
    outside.write_text("secret\n")
    found.path.unlink()
    os.symlink(outside, found.path)
    with pytest.raises(OSError):
        logs.tail(found.path, 10)


def test_a_file_swapped_for_a_fifo_does_not_block_the_read(working_dir):
    found = logs.find_log("t", working_dir, "stmgr-1.log")
    found.path.unlink()
    os.mkfifo(found.path)
    with pytest.raises(OSError, match="no longer a regular file"):
        logs.tail(found.path, 10)


def test_a_logs_folder_that_is_a_symlink_serves_nothing(tmp_path, working_dir):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(working_dir / "logs", elsewhere / "logs")
    assert logs.list_logs(elsewhere) == []
    with pytest.raises(NotFound, match="not a directory"):
        logs.find_log("t", elsewhere, "stmgr-1.log")


@pytest.mark.parametrize("name", ["../stmgr-1.log", "/abs/stmgr-1.log", "..", ".hidden.log",
                                  "a\\b.log"])
def test_paths_are_bad_parameters(working_dir, name):
    with pytest.raises(BadParameter, match="is a path"):
        logs.find_log("t", working_dir, name)


def test_the_regular_file_is_served(working_dir):
    assert [f.name for f in logs.list_logs(working_dir)] == ["stmgr-1.log"]
    assert logs.tail(logs.find_log("t", working_dir, "stmgr-1.log").path, 1) == "b\n"
