"""Checkpoints and savepoints survive an OS crash, not only a process crash: every file is
fsynced before the rename that publishes it, and the directory holding the new name after
that rename (a rename not yet on disk is lost with the page cache). Checked with a
recording of every fsync (by the path its descriptor names) and every rename, in order."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.statefulstorage.localfs import LocalFileSystemStorage
from engine.statefulstorage.savepoints import MANIFEST, read_savepoint, write_savepoint


class Recorder:
    """The fsyncs (by path) and renames of the code under test, in the order they ran."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[tuple] = []
        real_fsync, real_replace = os.fsync, os.replace

        def fsync(fd: int) -> None:
            real_fsync(fd)
            self.events.append(("fsync", Path(os.readlink(f"/proc/self/fd/{fd}"))))

        def replace(src, dst, **kwargs) -> None:
            real_replace(src, dst, **kwargs)
            self.events.append(("rename", Path(src).resolve(), Path(dst).resolve()))

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "replace", replace)

    def renames(self) -> list[tuple[int, Path, Path]]:
        return [(i, e[1], e[2]) for i, e in enumerate(self.events) if e[0] == "rename"]

    def fsynced(self, path: Path, before: int | None = None, after: int | None = None) -> bool:
        return any(e == ("fsync", path.resolve())
                   and (before is None or i < before) and (after is None or i > after)
                   for i, e in enumerate(self.events))


@pytest.fixture
def recorder(monkeypatch) -> Recorder:
    return Recorder(monkeypatch)


def test_each_checkpoint_file_is_fsynced_before_its_rename_and_its_directory_after(
        tmp_path, recorder):
    storage = LocalFileSystemStorage(tmp_path / "checkpoints")
    storage.store("ckpt-1", "count", 3, b"state of task 3")
    storage.store_named("ckpt-1", "count", "3.keyed", b"manifest")  # keyed state's metadata
    storage.store("ckpt-1", "__consistent", 0, b"marker")
    renames = recorder.renames()
    assert [dst.name for _, _, dst in renames] == ["3.state", "3.keyed", "0.state"]
    for index, tmp, published in renames:
        assert recorder.fsynced(tmp, before=index), f"{published.name}: data not on disk first"
        assert recorder.fsynced(published.parent, after=index), \
            f"{published.name}: its rename not on disk"
    # the directories made for them are on disk in their parents
    for made in (tmp_path / "checkpoints", tmp_path / "checkpoints" / "ckpt-1",
                 tmp_path / "checkpoints" / "ckpt-1" / "count"):
        assert recorder.fsynced(made.parent, before=renames[0][0]), made
    assert storage.load("ckpt-1", "count", 3) == b"state of task 3"


def test_a_savepoint_is_on_disk_whole_before_its_rename_and_the_rename_after(tmp_path,
                                                                             monkeypatch):
    storage = LocalFileSystemStorage(tmp_path / "checkpoints")
    storage.store_named("ckpt-1", "count", "kg-0.full", b"group 0")
    storage.store("ckpt-2", "count", 3, b"state")
    storage.store_named("ckpt-2", "count", "3.refs", b"ckpt-1\n")  # reads ckpt-1's group
    recorder = Recorder(monkeypatch)
    root = tmp_path / "savepoints"
    path = write_savepoint(storage, "ckpt-2", root, "before-upgrade", {"topology": "wc"})
    assert read_savepoint(path)["checkpoint_id"] == "ckpt-2"
    [(index, tmp, published)] = recorder.renames()
    assert published == path.resolve()
    files = sorted(p.relative_to(path) for p in path.rglob("*") if p.is_file())
    assert [str(f) for f in files] == ["ckpt-1/count/kg-0.full", "ckpt-2/count/3.refs",
                                       "ckpt-2/count/3.state", MANIFEST]
    for name in files:  # the copies and the manifest, each as written under the tmp name
        assert recorder.fsynced(tmp / name, before=index), f"{name}: not on disk before"
    for directory in [p for p in path.rglob("*") if p.is_dir()]:
        assert recorder.fsynced(tmp / directory.relative_to(path), before=index), directory
    assert recorder.fsynced(tmp, before=index)
    assert recorder.fsynced(root, after=index), "the savepoint's rename is not on disk"
    assert recorder.fsynced(tmp_path, before=index), "the savepoints directory it made"
    assert json.loads((path / MANIFEST).read_text())["savepoint_id"] == "before-upgrade"


def test_the_record_of_the_consistent_checkpoints_is_on_disk_after_its_rename(tmp_path,
                                                                             monkeypatch):
    """The local state manager's nodes (the newest consistent checkpoint's record among
    them, which a restore starts from) are renamed into place and their directory
    fsynced: after an OS crash the record is the new one."""
    from engine.messages import ckptmgr_pb2
    from engine.statemgr import open_state_manager

    with open_state_manager("local", root=tmp_path / "state") as state:
        record = ckptmgr_pb2.StatefulConsistentCheckpoints()
        record.consistent_checkpoints.add(checkpoint_id="ckpt-1")
        state.create("statefulcheckpoints", "wc", record)
        recorder = Recorder(monkeypatch)
        record.consistent_checkpoints.add(checkpoint_id="ckpt-2")
        state.set("statefulcheckpoints", "wc", record)
        [(index, tmp, published)] = [r for r in recorder.renames()
                                     if "statefulcheckpoints" in str(r[2])]
        assert recorder.fsynced(tmp, before=index), "the record's data is not on disk first"
        assert recorder.fsynced(published.parent, after=index), "its rename is not on disk"
