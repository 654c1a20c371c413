"""Savepoints: named, self-contained copies of a consistent checkpoint (Flink's savepoints).

A checkpoint is the engine's, kept a few at a time and read only by the topology that
wrote it; a savepoint is the user's: ``heron savepoint NAME`` (or ``heron kill NAME
--savepoint``) copies the newest checkpoint, with every older file its keyed state's
chains read from, into ``<savepoints>/<id>/``, writes ``savepoint.json`` describing it,
and nothing ever deletes it. ``heron submit ... --from-savepoint ID`` starts a topology
from it, possibly with new code or other parallelism: components are matched by name,
keyed state is read by key group and per-task state shared out as on any rescale.

Inside, the layout is a checkpoint storage's (``<checkpoint id>/<component>/...``), so the
same readers restore from it; the copy is written under a temporary name, every file and
directory of it fsynced, then renamed and its directory fsynced (engine/common/runtime/
durable.py), so a savepoint is whole or absent, even after an OS crash.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

from engine.common.runtime.crash_points import crash
from engine.common.runtime.durable import fsync_tree, private_dirs, publish, write_file
from engine.statefulstorage.localfs import LocalFileSystemStorage

MANIFEST = "savepoint.json"
#: a restore request's checkpoint id that names a savepoint: "savepoint:<checkpoint id>"
PREFIX = "savepoint:"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class SavepointError(ValueError):
    """A savepoint that cannot be written, found or used; the message says which."""


def check_id(savepoint_id: str) -> str:
    if not _ID.match(savepoint_id or ""):
        raise SavepointError(f"savepoint id {savepoint_id!r}: use letters, digits, '.', '_' and "
                             "'-' (at most 100, starting with a letter or digit)")
    return savepoint_id


def default_id(topology: str) -> str:
    return f"{topology}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"


def write_savepoint(storage: LocalFileSystemStorage, checkpoint_id: str, directory: Path | str,
                    savepoint_id: str, metadata: dict[str, Any]) -> Path:
    """Copy checkpoint ``checkpoint_id`` (and the older checkpoints it reads from) into
    ``directory/savepoint_id``; its path. Raises ``SavepointError`` if it exists."""
    check_id(savepoint_id)
    root = private_dirs(Path(directory))
    target = root / savepoint_id
    if target.exists():
        raise SavepointError(f"savepoint {savepoint_id!r} already exists in {root}")
    tmp = root / f".{savepoint_id}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        for cid in sorted({checkpoint_id} | storage.read_by({checkpoint_id})):
            shutil.copytree(storage.root / cid, tmp / cid)
            crash("savepoint.copy.half_written", "tmanager")
        manifest = {**metadata, "savepoint_id": savepoint_id, "checkpoint_id": checkpoint_id,
                    "created": time.time()}
        write_file(tmp / MANIFEST,
                   (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))
        fsync_tree(tmp)  # every copied file and directory on disk before it is published
        publish(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def read_savepoint(path: Path | str) -> dict[str, Any]:
    """The manifest of the savepoint at ``path``; ``SavepointError`` naming what is wrong."""
    manifest = Path(path) / MANIFEST
    try:
        data = json.loads(manifest.read_text())
    except FileNotFoundError:
        raise SavepointError(f"{path} is not a savepoint (no {MANIFEST})") from None
    except (OSError, ValueError) as exc:
        raise SavepointError(f"{manifest}: unreadable: {exc}") from exc
    if not isinstance(data, dict) or "checkpoint_id" not in data:
        raise SavepointError(f"{manifest}: not a savepoint manifest")
    return data


def find_savepoint(savepoint: str, directory: str | None) -> Path:
    """A savepoint given as a path, or as an id under ``directory``."""
    candidate = Path(savepoint).expanduser()
    if candidate.is_absolute() or os.sep in savepoint:
        path = candidate
    elif directory:
        path = Path(directory).expanduser() / check_id(savepoint)
    else:
        raise SavepointError(f"savepoint {savepoint!r}: no savepoint directory is configured; "
                             "give the savepoint's path")
    read_savepoint(path)
    return path


def savepoint_storage(path: Path | str) -> LocalFileSystemStorage:
    """The savepoint's files, readable as a checkpoint storage."""
    return LocalFileSystemStorage(Path(path))


def is_savepoint(checkpoint_id: str) -> bool:
    return checkpoint_id.startswith(PREFIX)


def restore_id(checkpoint_id: str) -> str:
    return PREFIX + checkpoint_id


def inner_id(checkpoint_id: str) -> str:
    return checkpoint_id[len(PREFIX):]


def check_components(manifest: dict[str, Any], stateful: set[str], allow_missing: bool) -> None:
    """A savepoint fits a topology when every stateful component of each has state in the
    other (matched by name); ``allow_missing`` accepts the difference (empty state for a
    new component, the state of a gone one dropped)."""
    saved = set((manifest.get("components") or {}).keys())
    missing = sorted(stateful - saved)
    gone = sorted(saved - stateful)
    if allow_missing or not (missing or gone):
        return
    parts = []
    if missing:
        parts.append(f"stateful component(s) {', '.join(map(repr, missing))} have no state in "
                     f"it (new or renamed)")
    if gone:
        parts.append(f"it holds state for {', '.join(map(repr, gone))}, which the topology no "
                     "longer has (removed or renamed)")
    raise SavepointError(f"savepoint {manifest.get('savepoint_id', '?')!r}: "
                         + "; ".join(parts) + " (--allow-missing-state starts them empty / "
                         "drops it)")
