"""Where a running Health Manager keeps its :class:`LoopState` and its records.

One state-manager node per topology, ``healthmgr/<name>`` (a
:class:`~engine.messages.healthmgr_pb2.HealthState`), rather than a file in the working
directory: on a cluster, container 0 may start again on another node, and ``heron
health`` and the tracker read the state manager from anywhere (ZooKeeper across
machines, the local tree on one). ``heron kill`` removes the node with the rest of the
topology's state.

The records kept are bounded (:data:`KEEP_RECORDS`) so the node stays far below
ZooKeeper's 1 MB limit; the Health Manager's log has every one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any, Final

from engine.healthmgr.records import HealthEvent
from engine.healthmgr.state import LoopState
from engine.messages import healthmgr_pb2
from engine.spi.statemgr import StateManager

log = logging.getLogger(__name__)

KIND: Final = "healthmgr"
#: records kept in the node, newest last (about 300 bytes each)
KEEP_RECORDS = 500


class HealthStore:
    """Read and write ``healthmgr/<name>`` for the submission ``topology_id``."""

    def __init__(self, state: StateManager, name: str, topology_id: str,
                 keep: int = KEEP_RECORDS) -> None:
        self.state = state
        self.name = name
        self.topology_id = topology_id
        self.keep = keep
        self._message = self._read()

    def _read(self) -> healthmgr_pb2.HealthState:
        stored = self.state.get(KIND, self.name)
        if stored is not None and stored.topology_id == self.topology_id:
            return stored
        # nothing yet, or left by an earlier submission of the same name: start afresh
        return healthmgr_pb2.HealthState(topology_id=self.topology_id)

    def loop_state(self) -> LoopState | None:
        """The state a previous run of this Health Manager left, if any."""
        if not self._message.loop_state_json:
            return None
        try:
            return LoopState.from_json(json.loads(self._message.loop_state_json))
        except (ValueError, TypeError, AttributeError) as exc:
            log.warning("%s/%s holds an unreadable loop state (%s); starting afresh",
                        KIND, self.name, exc)
            return None

    def save(self, loop_state: LoopState, events: Iterable[HealthEvent] = ()) -> None:
        """Store the loop state and append ``events`` (the oldest are dropped past
        ``keep``)."""
        message = self._message
        message.loop_state_json = json.dumps(loop_state.to_json(), sort_keys=True)
        message.records_json.extend(json.dumps(e.to_json(), sort_keys=True) for e in events)
        excess = len(message.records_json) - self.keep
        if excess > 0:
            del message.records_json[:excess]
        if self.state.get(KIND, self.name) is None:
            self.state.create(KIND, self.name, message)
        else:
            self.state.set(KIND, self.name, message)


def read_records(state: StateManager, name: str) -> list[dict[str, Any]]:
    """The records of ``name``'s Health Manager, oldest first (empty when it never
    recorded anything); what ``heron health --json`` and ``/topologies/health`` return."""
    return records_of(state.get(KIND, name))


def records_of(stored: healthmgr_pb2.HealthState | None) -> list[dict[str, Any]]:
    """The records a stored ``HealthState`` holds (empty for None)."""
    if stored is None:
        return []
    out = []
    for text in stored.records_json:
        try:
            out.append(json.loads(text))
        except ValueError:
            continue
    return out
