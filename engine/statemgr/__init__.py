"""State managers: where a topology's plans and its Topology Master's location live.

Heron's layout, keyed by topology name, each node holding protobuf bytes:
``topologies``, ``packingplans``, ``pplans``, ``executionstate``, ``tmanagers``
(ephemeral: it disappears when its owner dies) and ``schedulers``. The local filesystem
manager is the embedded default (no server needed); ZooKeeper comes next behind the same
interface.
"""

from engine.statemgr.base import NoNodeError, NodeExistsError, StateError, StateManager
from engine.statemgr.local_fs import LocalFileSystemStateManager

__all__ = ["LocalFileSystemStateManager", "NoNodeError", "NodeExistsError", "StateError",
           "StateManager"]
