"""Stateful components: Heron's Python names (``heronpy.api.state``), for streamparse code.

A component that mixes in :class:`StatefulComponent` keeps what must survive a failure in
the :class:`State` mapping it is given by ``init_state``. Under
``topology.reliability.mode: EFFECTIVELY_ONCE`` the engine saves that mapping at every
checkpoint and, after any failure, gives every component of the topology the state of
the newest checkpoint the whole topology completed, so each input is reflected in state
exactly once (docs/stateful.md).

The hooks, in the order an engine calls them:

* ``init_state(state)``: before ``initialize``, with the restored state (empty the first
  time, and in the other reliability modes, where nothing is saved);
* ``pre_save(checkpoint_id)``: just before the state is saved (a spout records its source
  position here, a sink prepares its transaction);
* ``post_save(checkpoint_id)``: once that checkpoint is consistent across the topology
  (beyond heronpy: Heron's Java API has it);
* ``pre_restore(checkpoint_id)``: before this component is thrown away for a rollback to
  ``checkpoint_id`` (a fresh component then gets ``init_state`` with that state).

This module is API only: it imports no engine.
"""
from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

from .bolt import Bolt

__all__ = ["State", "HashMapState", "StatefulComponent", "TwoPhaseCommitBolt",
           "PENDING_TRANSACTIONS_KEY", "checkpoint_order"]


class State(MutableMapping):
    """The state of one task: keys and values the topology's serializer can encode.

    Both heronpy's methods (``put``, ``get``, ``enumerate``, ``clear``) and a mapping's
    (``state[k] = v``, ``del state[k]``, ``in``, ``len``, iteration) work.
    """

    def put(self, key: Any, value: Any) -> None:
        self[key] = value

    def enumerate(self) -> Iterator[tuple[Any, Any]]:
        """Every (key, value) pair, as heronpy's ``State.enumerate``."""
        return iter(list(self.items()))


class HashMapState(dict):
    """A ``State`` held in a dict: what engines hand a component.

    It *is* a dict (registered as a ``State``), so ``state[k] = v`` and ``get`` cost what
    a dict's do: a counting bolt calls them once per tuple.
    """

    def put(self, key: Any, value: Any) -> None:
        self[key] = value

    def enumerate(self) -> Iterator[tuple[Any, Any]]:
        """Every (key, value) pair, as heronpy's ``State.enumerate``."""
        return iter(list(self.items()))

    def __repr__(self) -> str:
        return f"HashMapState({dict.__repr__(self)})"


State.register(HashMapState)


class StatefulComponent:
    """Mix into a ``Spout`` or ``Bolt`` (first, as heronpy's examples do) to keep state.

    ``init_state`` must be defined; the other hooks are optional. The state object stays
    the component's for its whole life: change it in place, never replace it.
    """

    def init_state(self, stateful_state: State) -> None:
        """Called before ``initialize`` with this task's state (restored, or empty)."""
        raise NotImplementedError(
            f"{type(self).__name__} mixes in StatefulComponent but defines no init_state")

    def pre_save(self, checkpoint_id: str) -> None:
        """Called just before the state is saved for ``checkpoint_id``."""

    def post_save(self, checkpoint_id: str) -> None:
        """Called once ``checkpoint_id`` is consistent across the whole topology."""

    def pre_restore(self, checkpoint_id: str) -> None:
        """Called before this component is discarded for a rollback to ``checkpoint_id``
        (``""``: to empty state)."""


#: where a TwoPhaseCommitBolt keeps the transactions it prepared and has not yet
#: committed: {checkpoint id: what ``pre_commit`` returned}
PENDING_TRANSACTIONS_KEY = "__two_phase_commit_pending__"


class TwoPhaseCommitBolt(StatefulComponent, Bolt):
    """A bolt whose output reaches an outside system exactly once (Flink's
    ``TwoPhaseCommitSinkFunction``; Heron has it only in Java).

    Each checkpoint interval is one transaction: ``begin()`` opens it, ``process`` writes
    into it, ``pre_commit(checkpoint_id)`` makes it durable but invisible at the checkpoint
    and returns a small description of it (kept in this bolt's state), and
    ``commit(checkpoint_id, prepared)`` makes it visible once the checkpoint is consistent
    across the topology. Processing never waits: a new transaction begins at once.

    After a failure, transactions the restored checkpoint holds as prepared are committed
    again before anything else (their checkpoint is consistent, so they belong to the
    output), which is why **commit must be idempotent**: committing a transaction that is
    already committed must change nothing. The transaction open when the failure came
    is given to ``abort``, when this process is still there to do it; one that died with
    its process must simply never become visible.

    Subclasses implement ``begin``, ``pre_commit``, ``commit`` and ``abort``, and may
    use ``self.state`` for state of their own (never under ``PENDING_TRANSACTIONS_KEY``).
    """

    state: State

    def begin(self) -> None:
        """Open a new transaction; what ``process`` writes goes into it."""
        raise NotImplementedError

    def pre_commit(self, checkpoint_id: str) -> Any:
        """Make the open transaction durable and return how to find it again (a value the
        topology's serializer encodes: a file name, a list of keys)."""
        raise NotImplementedError

    def commit(self, checkpoint_id: str, prepared: Any) -> None:
        """Make the prepared transaction visible; idempotent."""
        raise NotImplementedError

    def abort(self) -> None:
        """Discard the open transaction."""

    # -- the checkpoint hooks, in terms of the four above ----------------------------
    def init_state(self, stateful_state: State) -> None:
        self.state = stateful_state
        pending = dict(stateful_state.get(PENDING_TRANSACTIONS_KEY) or {})
        for checkpoint_id in sorted(pending, key=checkpoint_order):
            self.commit(checkpoint_id, pending[checkpoint_id])
        stateful_state[PENDING_TRANSACTIONS_KEY] = {}
        self.begin()

    def pre_save(self, checkpoint_id: str) -> None:
        prepared = self.pre_commit(checkpoint_id)
        pending = dict(self.state.get(PENDING_TRANSACTIONS_KEY) or {})
        pending[checkpoint_id] = prepared
        self.state[PENDING_TRANSACTIONS_KEY] = pending
        self.begin()

    def post_save(self, checkpoint_id: str) -> None:
        pending = dict(self.state.get(PENDING_TRANSACTIONS_KEY) or {})
        done = [c for c in pending if checkpoint_order(c) <= checkpoint_order(checkpoint_id)]
        for cid in sorted(done, key=checkpoint_order):
            self.commit(cid, pending.pop(cid))
        self.state[PENDING_TRANSACTIONS_KEY] = pending

    def pre_restore(self, checkpoint_id: str) -> None:
        self.abort()


def checkpoint_order(checkpoint_id: str) -> tuple[int, str]:
    """Checkpoint ids end in a number that grows (``ckpt-<n>``, engines make them); this
    orders them by it (``""``, empty state, comes first)."""
    tail = str(checkpoint_id).rsplit("-", 1)[-1]
    return (int(tail), str(checkpoint_id)) if tail.isdigit() else (-1, str(checkpoint_id))
