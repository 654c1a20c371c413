"""The embedded state manager: Heron's tree as files under one directory.

Writes are atomic (a temporary file renamed over the node), so a reader never sees half
a plan. ZooKeeper's ephemeral nodes are emulated with a lease: the node's owner file
records the owning process, and this manager renews its leases from a background
thread. A reader treats an ephemeral node as gone when its owner process no longer
exists or its lease was not renewed in time, so a killed Topology Master's location
disappears as it would from ZooKeeper.

The tree is owner-only (docs/security.md): the root and every directory under it are
created 0700 (an existing root another user owns or can write is refused with
``UnsafePathError`` naming it), node files are written 0600.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

from engine.common.runtime.durable import fsync_dir
from engine.common.security.private import private_dir
from engine.statemgr.base import NodeExistsError, NoNodeError, StateError, StateManager

DEFAULT_LEASE_SECS = 10.0
_OWNER_SUFFIX = ".owner"


class LocalFileSystemStateManager(StateManager):
    #: every directory 0700 and node file 0600 (docs/security.md)
    protects_secrets = True

    def __init__(self, root: Path | str, *, lease_secs: float = DEFAULT_LEASE_SECS) -> None:
        self.root = Path(root).expanduser()
        # owner-only: created 0700, or checked (UnsafePathError names it) when it exists
        private_dir(self.root)
        self.lease_secs = lease_secs
        self._host = socket.gethostname()
        self._owned: set[str] = set()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._renewer: threading.Thread | None = None

    # -- node store --------------------------------------------------------------------
    def _file(self, path: str) -> Path:
        return self.root / path

    def _create(self, path: str, data: bytes, ephemeral: bool) -> None:
        target = self._file(path)
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._lock:
            if self._get(path) is not None:
                raise NodeExistsError(f"{path} already exists under {self.root}")
            if ephemeral:
                self._write_owner(path)
            else:
                self._owner_file(path).unlink(missing_ok=True)
            self._atomic_write(target, data)
            if ephemeral:
                self._owned.add(path)
                self._start_renewer()

    def _set(self, path: str, data: bytes) -> None:
        target = self._file(path)
        if self._get(path) is None:
            raise NoNodeError(f"{path} does not exist under {self.root}")
        self._atomic_write(target, data)

    def _get(self, path: str) -> bytes | None:
        target = self._file(path)
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StateError(f"{target}: cannot read: {exc}") from None
        owner = self._owner_file(path)
        if owner.exists() and not self._owner_alive(owner):
            return None
        return data

    def _delete(self, path: str) -> None:
        with self._lock:
            self._file(path).unlink(missing_ok=True)
            self._owner_file(path).unlink(missing_ok=True)
            self._owned.discard(path)

    def _children(self, path: str) -> list[str]:
        directory = self._file(path)
        if not directory.is_dir():
            return []
        return sorted(p.name for p in directory.iterdir()
                      if not p.name.startswith(".") and not p.name.endswith(_OWNER_SUFFIX)
                      and self._get(f"{path}/{p.name}") is not None)

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            for path in list(self._owned):
                self._file(path).unlink(missing_ok=True)
                self._owner_file(path).unlink(missing_ok=True)
            self._owned.clear()
        if self._renewer is not None:
            self._renewer.join(2)

    # -- leases ------------------------------------------------------------------------
    def _owner_file(self, path: str) -> Path:
        return self._file(path + _OWNER_SUFFIX)

    def _write_owner(self, path: str) -> None:
        record = {"pid": os.getpid(), "host": self._host, "lease_secs": self.lease_secs}
        self._atomic_write(self._owner_file(path), json.dumps(record).encode())

    def _owner_alive(self, owner: Path) -> bool:
        try:
            record = json.loads(owner.read_text())
            age = time.time() - owner.stat().st_mtime
        except (OSError, ValueError):
            return False
        if age > float(record.get("lease_secs", self.lease_secs)):
            return False
        if record.get("host") == self._host:
            try:
                os.kill(int(record["pid"]), 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                return True
        return True

    def _start_renewer(self) -> None:
        if self._renewer is not None:
            return

        def renew() -> None:
            while not self._closed.wait(self.lease_secs / 3):
                with self._lock:
                    for path in list(self._owned):
                        try:
                            os.utime(self._owner_file(path))
                        except OSError:
                            self._owned.discard(path)

        self._renewer = threading.Thread(target=renew, name="statemgr-lease", daemon=True)
        self._renewer.start()

    @staticmethod
    def _atomic_write(target: Path, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        try:
            os.fchmod(fd, 0o600)  # mkstemp's mode already; said here because it matters
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
            # the rename itself on disk: after an OS crash the node (the newest
            # consistent checkpoint's record among them) is the new one, not the old
            fsync_dir(target.parent)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
