"""Checkpoints as files: ``<root>/<checkpoint id>/<component>/<task>.state``.

Each file is written to a temporary name, flushed to disk and renamed, so a reader sees
a whole state or none; a header with the length and a CRC-32 of the body lets a reader
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

from engine.security.private import private_dir
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

    def _path(self, checkpoint_id: str, component: str, task: int) -> Path:
        return self.root / _safe(checkpoint_id) / _safe(component) / f"{int(task)}.state"

    def store(self, checkpoint_id: str, component: str, task: int, data: bytes) -> int:
        path = self._path(checkpoint_id, component, task)
        private_dir(self.root)
        private_dir(path.parent.parent)
        private_dir(path.parent)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        header = _HEADER.pack(MAGIC, len(data), zlib.crc32(data))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(header)
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return len(header) + len(data)

    def load(self, checkpoint_id: str, component: str, task: int) -> bytes:
        path = self._path(checkpoint_id, component, task)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            raise CheckpointUnreadable(f"{path}: no state stored for {component} task {task} "
                                       f"in checkpoint {checkpoint_id}") from None
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
        deleted = 0
        for name in self.checkpoints():
            if name not in keep:
                shutil.rmtree(self.root / name, ignore_errors=True)
                deleted += 1
        return deleted
