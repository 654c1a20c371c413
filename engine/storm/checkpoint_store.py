"""What the storm engine's checkpoints look like in state storage, and reading one back.

A checkpoint is consistent once its marker (component ``__consistent``, task 0) can be
read: the marker is written after every task's state, so a checkpoint cut short by a
crash is never restored. Ids are ``ckpt-<n>``. Kept apart from the ``Checkpointer``
thread (engine/storm/checkpoint.py), which decides when to save and roll back: this
module only reads what was saved, newest consistent checkpoint first, older ones when
one cannot be read.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from compat.storm_api.state import HashMapState, State
from engine.common.runtime.crash_points import crash
from engine.common.runtime.errors import LocalEngineError
from engine.config.keys import START_CLEAN_KEY
from engine.spi.statefulstorage import CheckpointUnreadable, StatefulStorage
from engine.statefulstorage.codec import decode_state
from engine.statefulstorage.keyed import Chains, KeyedStateStore
from engine.statefulstorage.rescale import RescaleRefused, keyed_by_input, rescale_task_states

log = logging.getLogger("heron.storm")

#: the component name of the marker that makes a checkpoint consistent (written last)
MARKER_COMPONENT = "__consistent"


def checkpoint_number(checkpoint_id: str) -> int:
    """The growing number at the end of a ``ckpt-<n>`` id (-1 for anything else)."""
    tail = str(checkpoint_id).rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def stored_consistent(storage: StatefulStorage) -> list[str]:
    """The ids of the stored checkpoints whose marker can be read, oldest first."""
    found = []
    for cid in storage.checkpoints():
        if checkpoint_number(cid) < 0:
            continue
        try:
            storage.load(cid, MARKER_COMPONENT, 0)
        except CheckpointUnreadable:
            continue  # never completed (or its marker is damaged): not consistent
        found.append(cid)
    return sorted(found, key=checkpoint_number)


def read_marker(storage: StatefulStorage, cid: str) -> dict[str, Any]:
    """A checkpoint's marker (which tasks of which component it holds)."""
    try:
        return json.loads(storage.load(cid, MARKER_COMPONENT, 0).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CheckpointUnreadable(f"checkpoint {cid}: unreadable marker: {exc}") from exc


def load_newest(storage: StatefulStorage, consistent: list[str],
                stateful_tasks: dict[str, list[int]], *, serializer: Any,
                inputs_of: Callable[[str], list[Any]], classes: dict[str, Any],
                key_groups: int, topology: str
                ) -> tuple[str, dict[int, State], dict[int, Chains] | None, list[str]]:
    """(checkpoint id, task -> state, task -> keyed state's chains, skipped) for the newest
    readable checkpoint of ``consistent``; ("", {}, None, skipped) when there is none.

    A component run with another number of tasks than the checkpoint holds gets its
    per-task state shared out by its class's ``rescale_state`` (by key group when its
    inputs are keyed: ``inputs_of`` gives their groupings); ``LocalEngineError`` when it
    cannot be."""
    skipped: list[str] = []
    for cid in reversed(list(consistent)):
        try:
            marker = read_marker(storage, cid)
            saved = {c: sorted(int(t) for t in ts)
                     for c, ts in (marker.get("tasks") or {}).items()}
            states: dict[int, State] = {}
            chains: dict[int, Chains] = {}
            for comp, tasks in stateful_tasks.items():
                tasks = sorted(tasks)
                stored = saved.get(comp, [])
                old = [decode_state(storage.load(cid, comp, t), serializer) for t in stored]
                if stored and len(stored) != len(tasks):
                    try:
                        cls = classes.get(comp)
                        by_key = keyed_by_input(cls, inputs_of(comp))
                        old = rescale_task_states(
                            cls, comp, old, len(tasks),
                            key_groups=key_groups if by_key else None)
                    except RescaleRefused as exc:
                        raise LocalEngineError(
                            f"{exc} (checkpoint {cid} holds {len(stored)} task(s), this "
                            f"run has {len(tasks)}; start clean with "
                            f"{START_CLEAN_KEY}: true)") from exc
                keyed = KeyedStateStore(storage, serializer, comp, key_groups)
                # by position: task ids shift when another component's count changes
                for index, task in enumerate(tasks):
                    state = old[index] if index < len(old) else HashMapState()
                    part, chains[task] = keyed.load(cid, index, len(tasks))
                    if part or chains[task]:
                        state.adopt_keyed(part)
                    states[task] = state
            crash("storm.restore.after_load", topology)
            return cid, states, chains, skipped
        except CheckpointUnreadable as exc:
            skipped.append(f"{cid}: {exc}")
            log.warning("%s: checkpoint %s cannot be restored (%s); trying an older one",
                        topology, cid, exc)
        except LocalEngineError:
            raise
        except Exception as exc:  # bytes that passed the checksum but do not decode
            skipped.append(f"{cid}: {type(exc).__name__}: {exc}")
            log.warning("%s: checkpoint %s cannot be decoded (%s); trying an older one",
                        topology, cid, exc)
    return "", {}, None, skipped
