"""A task restoring its state from a checkpoint whose files are gone (deleted by
retention while a restore was chosen, or a checkpoint directory that is not mounted on
this node) says the checkpoint is unreadable, so the Topology Master falls back to an
older one; it never starts empty as if it had restored."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from compat.storm_api.state import HashMapState
from engine.common.serialization import serializer_for_config
from engine.instance.stateful import TaskCheckpointing
from engine.spi.statefulstorage import CheckpointUnreadable
from engine.statefulstorage.codec import encode_state
from engine.statefulstorage.localfs import LocalFileSystemStorage


def checkpointing(tmp_path) -> tuple[TaskCheckpointing, LocalFileSystemStorage]:
    storage = LocalFileSystemStorage(tmp_path / "checkpoints")
    task = TaskCheckpointing(storage, serializer_for_config({}), "count", 3)
    task.layout = (0, 1)
    return task, storage


def test_a_checkpoint_whose_files_are_gone_is_unreadable_not_empty(tmp_path):
    task, storage = checkpointing(tmp_path)
    loop = SimpleNamespace(component_is_stateful=True)
    serializer = serializer_for_config({})
    state = HashMapState()
    state["the"] = 7
    storage.store("ckpt-2", "count", 3, encode_state(state, serializer, component="count",
                                                      task=3))
    assert dict(task._load(loop, "ckpt-2")) == {"the": 7}
    with pytest.raises(CheckpointUnreadable) as caught:
        task._load(loop, "ckpt-1")  # never written here: its files are missing
    assert "ckpt-1 holds no state of count" in str(caught.value)
    # no checkpoint at all (a first start) is still an empty state
    assert dict(task._load(loop, "")) == {}
