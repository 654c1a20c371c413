"""State managers: where a topology's plans and its Topology Master's location live.

Heron's layout, keyed by topology name, each node holding protobuf bytes:
``topologies``, ``packingplans``, ``pplans``, ``executionstate``, ``tmanagers``
(ephemeral: it disappears when its owner dies) and ``schedulers``. The local filesystem
manager is the embedded default (no server needed); the ZooKeeper manager keeps the same
tree in a ZooKeeper ensemble, for topologies whose processes span machines.
``open_state_manager`` picks one from the names the CLI and ``heron.yaml`` use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.common.security.private import private_dir
from engine.statemgr.base import NodeExistsError, NoNodeError, StateError, StateManager
from engine.statemgr.local_fs import LocalFileSystemStateManager
from engine.statemgr.zookeeper import ZooKeeperStateManager, read_digest_file

__all__ = [
    "DEFAULT_LOCAL_ROOT",
    "STATE_MANAGER_KINDS",
    "LocalFileSystemStateManager",
    "NoNodeError",
    "NodeExistsError",
    "StateError",
    "StateManager",
    "ZooKeeperStateManager",
    "open_state_manager",
]

#: The kinds ``open_state_manager`` accepts (``--state-manager``).
STATE_MANAGER_KINDS = ("local", "zookeeper")
#: Where the local state manager keeps its tree unless told otherwise.
DEFAULT_LOCAL_ROOT = Path("~/.heron/state")


def open_state_manager(kind: str, *, root: str | Path | None = None,
                       zk_hosts: str | None = None, zk_root: str = "/heron",
                       lease_secs: float | None = None,
                       zk_session_timeout: float | None = None,
                       zk_auth_file: str | Path | None = None) -> StateManager:
    """Open the state manager named ``kind``: "local" (files under ``root``, default
    ~/.heron/state, owner-only) or "zookeeper" (``zk_hosts`` required, tree under
    ``zk_root``; ``zk_auth_file``, an owner-only file holding a digest ``user:password``,
    protects every node it creates with a digest ACL: docs/security.md).

    One entry point so the CLI, the scheduler and the tracker choose a manager the same
    way and fail with the same messages.
    """
    if kind == "local":
        kwargs: dict[str, Any] = {}
        if lease_secs is not None:
            kwargs["lease_secs"] = lease_secs
        if root is None:
            # the heron home the default tree lives in is owner-only too
            private_dir(DEFAULT_LOCAL_ROOT.expanduser().parent)
        return LocalFileSystemStateManager(DEFAULT_LOCAL_ROOT if root is None else root,
                                           **kwargs)
    if kind == "zookeeper":
        if not zk_hosts:
            raise StateError("the zookeeper state manager needs an address: --zk HOST:PORT")
        zk_kwargs: dict[str, Any] = {}
        if zk_session_timeout is not None:
            zk_kwargs["session_timeout"] = zk_session_timeout
        if zk_auth_file is not None:
            zk_kwargs["auth"] = read_digest_file(zk_auth_file)
            zk_kwargs["auth_source"] = str(zk_auth_file)
        return ZooKeeperStateManager(zk_hosts, zk_root, **zk_kwargs)
    raise StateError(f"unknown state manager {kind!r}; kinds: {', '.join(STATE_MANAGER_KINDS)}")
