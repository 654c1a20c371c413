"""State storage plug-ins (Heron's ``heron/statefulstorages``): the local file system,
which on a cluster is a directory every node mounts. ``open_storage`` picks one from a
topology's ``Checkpointing`` settings; ``codec`` turns a task's ``State`` into bytes."""

from __future__ import annotations

from pathlib import Path

from engine.config.checkpointing import Checkpointing
from engine.spi.statefulstorage import CheckpointUnreadable, StatefulStorage
from engine.statefulstorage.localfs import LocalFileSystemStorage

STORAGES = {"localfs": LocalFileSystemStorage}


def default_root(working_dir: str | Path, topology_name: str) -> Path:
    """Where checkpoints go when the topology names no root: beside its working files."""
    return Path(working_dir) / "checkpoints" / topology_name


def open_storage(settings: Checkpointing, *, topology_name: str,
                 working_dir: str | Path) -> StatefulStorage:
    root = (Path(settings.root).expanduser() / topology_name if settings.root
            else default_root(working_dir, topology_name))
    return STORAGES[settings.storage](root)


__all__ = ["CheckpointUnreadable", "LocalFileSystemStorage", "STORAGES", "StatefulStorage",
           "default_root", "open_storage"]
