"""Where sockets live. Unix socket paths are limited to about 107 bytes, so ipc
endpoints go in a short owner-only directory under /tmp rather than under a topology's
(possibly long) working directory. TCP ports are never fixed: sockets bind port 0 and
publish what they got."""

from __future__ import annotations

from pathlib import Path

from engine.common.security.private import private_dir, runtime_root


def ipc_dir(topology_id: str) -> Path:
    """The topology's ipc directory, owner-only, under the checked runtime root
    (``HERON_RUNTIME_DIR`` or ``<tmp>/heron-<uid>``), made if missing."""
    return private_dir(ipc_path(topology_id))


def ipc_path(topology_id: str) -> Path:
    """Where the topology's ipc directory is, whether or not it exists."""
    return runtime_root() / topology_id[-12:]


def ipc_endpoint(topology_id: str, name: str) -> str:
    endpoint = f"ipc://{ipc_dir(topology_id) / name}"
    if len(endpoint) > 100:
        raise ValueError(f"ipc endpoint too long for a Unix socket: {endpoint}")
    return endpoint
