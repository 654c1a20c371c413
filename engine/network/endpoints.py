"""Where sockets live. Unix socket paths are limited to about 107 bytes, so ipc
endpoints go in a short per-user directory under /tmp rather than under a topology's
(possibly long) working directory. TCP ports are never fixed: sockets bind port 0 and
publish what they got."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def ipc_dir(topology_id: str) -> Path:
    base = Path(tempfile.gettempdir()) / f"heron-{os.getuid()}"
    path = base / topology_id[-12:]
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def ipc_endpoint(topology_id: str, name: str) -> str:
    endpoint = f"ipc://{ipc_dir(topology_id) / name}"
    if len(endpoint) > 100:
        raise ValueError(f"ipc endpoint too long for a Unix socket: {endpoint}")
    return endpoint
