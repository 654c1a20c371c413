"""Checkpoints as files: ``<root>/<checkpoint id>/<component>/<task>.state``, and the
named files of keyed state beside them (``kg-<group>.<kind>``, ``<task>.keyed``,
``<task>.refs``: engine/statefulstorage/keyed.py).

Each file is written to a temporary name, fsynced and renamed, and its directory fsynced
after the rename (engine/common/runtime/durable.py), so a reader sees a whole state or
none, even after an OS crash; a header with the length and a CRC-32 of the body lets a reader
tell a cut-short or corrupt file from a good one (``CheckpointUnreadable``), and the
Topology Master then falls back to an older checkpoint. Directories are owner-only:
state is the user's data.
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from pathlib import Path

from engine.common.runtime.durable import private_dirs, publish
from engine.spi.statefulstorage import CheckpointUnreadable

MAGIC = b"HST1"
_HEADER = struct.Struct("<4sQI")  # magic, body length, crc32 of the body


def _safe(name: str) -> str:
    """A component or checkpoint name as one path element (never a separator or ..)."""
    text = str(name)
    if not text or text in (".", "..") or "/" in text or "\0" in text:
        raise ValueError(f"{text!r} cannot name a checkpoint directory")
    return text


class LocalFileSystemStorage:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def describe(self) -> str:
        return f"localfs {self.root}"

    def _path(self, checkpoint_id: str, component: str, name: str) -> Path:
        return self.root / _safe(checkpoint_id) / _safe(component) / _safe(name)

    def store(self, checkpoint_id: str, component: str, task: int, data: bytes) -> int:
        return self.store_named(checkpoint_id, component, f"{int(task)}.state", data)

    def load(self, checkpoint_id: str, component: str, task: int) -> bytes:
        name = f"{int(task)}.state"
        if not self._path(checkpoint_id, component, name).exists():
            raise CheckpointUnreadable(f"{self._path(checkpoint_id, component, name)}: no state "
                                       f"stored for {component} task {task} in checkpoint "
                                       f"{checkpoint_id}")
        return self.load_named(checkpoint_id, component, name)

    def names(self, checkpoint_id: str, component: str) -> list[str]:
        try:
            return sorted(p.name for p in (self.root / _safe(checkpoint_id) / _safe(component)
                                           ).iterdir() if not p.name.startswith("."))
        except FileNotFoundError:
            return []

    def store_named(self, checkpoint_id: str, component: str, name: str, data: bytes) -> int:
        path = self._path(checkpoint_id, component, name)
        private_dirs(self.root, path.parent.parent, path.parent)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        header = _HEADER.pack(MAGIC, len(data), zlib.crc32(data))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(header)
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            publish(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return len(header) + len(data)

    def load_named(self, checkpoint_id: str, component: str, name: str) -> bytes:
        path = self._path(checkpoint_id, component, name)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            raise CheckpointUnreadable(f"{path}: no such file in checkpoint "
                                       f"{checkpoint_id}") from None
        except OSError as exc:
            raise CheckpointUnreadable(f"{path}: {exc.strerror or exc}") from exc
        if len(blob) < _HEADER.size:
            raise CheckpointUnreadable(f"{path}: cut short ({len(blob)} bytes, no header)")
        magic, length, crc = _HEADER.unpack_from(blob)
        body = blob[_HEADER.size:]
        if magic != MAGIC:
            raise CheckpointUnreadable(f"{path}: not a checkpoint file (bad magic {magic!r})")
        if len(body) != length:
            raise CheckpointUnreadable(f"{path}: cut short ({len(body)} of {length} bytes)")
        if zlib.crc32(body) != crc:
            raise CheckpointUnreadable(f"{path}: corrupt (checksum mismatch)")
        return body

    def checkpoints(self) -> list[str]:
        try:
            return [p.name for p in self.root.iterdir() if p.is_dir()]
        except FileNotFoundError:
            return []

    def dispose(self, keep: set[str]) -> int:
        keep = set(keep) | self.read_by(keep)
        deleted = 0
        for name in self.checkpoints():
            if name not in keep:
                shutil.rmtree(self.root / name, ignore_errors=True)
                deleted += 1
        return deleted

    def read_by(self, kept: set[str]) -> set[str]:
        """Older checkpoints the kept ones read from (their ``.refs`` files)."""
        out: set[str] = set()
        for checkpoint_id in kept:
            if not checkpoint_id:
                continue
            for refs in (self.root / checkpoint_id).glob("*/*.refs"):
                try:
                    text = self.load_named(checkpoint_id, refs.parent.name, refs.name).decode()
                except (CheckpointUnreadable, UnicodeDecodeError):
                    continue
                out.update(line for line in text.split() if line)
        return out
