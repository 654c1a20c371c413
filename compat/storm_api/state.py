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

from collections.abc import Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

from .bolt import Bolt

__all__ = ["State", "HashMapState", "KeyedState", "StatefulComponent", "TwoPhaseCommitBolt",
           "PENDING_TRANSACTIONS_KEY", "INHERITED_TRANSACTIONS_KEY", "checkpoint_order",
           "prepared_transactions", "split_lists"]


class State(MutableMapping[Any, Any]):
    """The state of one task: keys and values the topology's serializer can encode.

    Both heronpy's methods (``put``, ``get``, ``enumerate``, ``clear``) and a mapping's
    (``state[k] = v``, ``del state[k]``, ``in``, ``len``, iteration) work.
    """

    def put(self, key: Any, value: Any) -> None:
        self[key] = value

    def enumerate(self) -> Iterator[tuple[Any, Any]]:
        """Every (key, value) pair, as heronpy's ``State.enumerate``."""
        return iter(list(self.items()))


if TYPE_CHECKING:
    # what State.register(HashMapState) below says at run time, told to the type checker
    # (which does not follow register): engines hand a HashMapState where a State goes
    _RegisteredState = State
else:
    _RegisteredState = object


class HashMapState(dict[str, Any], _RegisteredState):
    """A ``State`` held in a dict: what engines hand a component.

    It *is* a dict (registered as a ``State``), so ``state[k] = v`` and ``get`` cost what
    a dict's do: a counting bolt calls them once per tuple. Its entries are the task's
    own; ``keyed()`` is the part of the state partitioned by key.
    """

    def put(self, key: Any, value: Any) -> None:
        self[key] = value

    def enumerate(self) -> Iterator[tuple[Any, Any]]:
        """Every (key, value) pair, as heronpy's ``State.enumerate``."""
        return iter(list(self.items()))

    def keyed(self) -> KeyedState:
        """This task's keyed state (created on first use): entries that move with their
        key when the component's parallelism changes (docs/stateful.md)."""
        keyed = self.__dict__.get("_keyed")
        if keyed is None:
            keyed = self.__dict__["_keyed"] = KeyedState()
        return keyed

    def adopt_keyed(self, keyed: KeyedState) -> None:
        """Engines: install the restored keyed state before the component sees it."""
        self.__dict__["_keyed"] = keyed

    def has_keyed(self) -> bool:
        return self.__dict__.get("_keyed") is not None

    def __repr__(self) -> str:
        return f"HashMapState({dict.__repr__(self)})"


State.register(HashMapState)


class KeyedState(dict[str, Any]):
    """State partitioned by key (Flink's keyed state), reached through ``state.keyed()``.

    Key it by the key of the fields grouping the component receives its input by: the
    grouping field's value (``keyed[word]``), or the tuple of the grouping fields' values.
    Under EFFECTIVELY_ONCE the fields grouping sends a key to the task owning the key's
    key group, and a checkpoint stores each key group on its own, so when the component's
    parallelism changes (``heron update``, the Health Manager) each task restores exactly
    the key groups it now owns: no key is lost or counted twice. A checkpoint refuses keys
    this task does not own (state keyed by something else than the input's key), naming
    one.

    Checkpoints of keyed state are incremental: only keys written since the last one are
    stored. So **replace a value to change it**: every way a dict changes itself marks the
    keys it touches (``keyed[k] = v``, ``keyed |= other``, ``update`` with a mapping, pairs
    or keywords, ``setdefault``, ``del``, ``pop``, ``popitem``; ``clear`` rewrites
    everything). ``setdefault`` marks its key even when the key is there, because the value
    it returns is usually changed in place (``keyed.setdefault(k, []).append(x)``). Any
    other value changed in place (``keyed[k].append(x)``) is seen by the next checkpoint
    only after ``keyed.touch(k)``.

    What makes a new mapping gives a plain ``dict``: ``keyed | other``, ``other | keyed``
    and ``keyed.copy()`` are snapshots that no checkpoint follows (change the state itself
    to change what is saved). ``KeyedState.fromkeys`` gives a ``KeyedState`` whose keys
    are all marked.
    """

    __slots__ = ("dirty", "cleared")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: keys written or deleted since the last checkpoint
        self.dirty: set[Any] = set(self)
        #: cleared since the last checkpoint (everything is rewritten)
        self.cleared = False

    def __setitem__(self, key: Any, value: Any) -> None:
        dict.__setitem__(self, key, value)
        self.dirty.add(key)

    def __delitem__(self, key: Any) -> None:
        dict.__delitem__(self, key)
        self.dirty.add(key)

    def touch(self, key: Any) -> None:
        """Mark ``key`` changed (after changing its value in place)."""
        self.dirty.add(key)

    def put(self, key: Any, value: Any) -> None:
        self[key] = value

    def enumerate(self) -> Iterator[tuple[Any, Any]]:
        return iter(list(self.items()))

    def setdefault(self, key: Any, default: Any = None) -> Any:
        # marked also when present: the value returned is usually changed in place
        if key not in self:
            dict.__setitem__(self, key, default)
        self.dirty.add(key)
        return dict.__getitem__(self, key)

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            self.dirty.add(key)
        return dict.pop(self, key, *default)

    def popitem(self) -> tuple[Any, Any]:
        key, value = dict.popitem(self)
        self.dirty.add(key)
        return key, value

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    # dict's |= returns the dict itself; so does this one, still a KeyedState, while
    # dict's | (which the type checker holds |= to) makes a new plain dict
    def __ior__(self, other: Any) -> KeyedState:  # type: ignore[override]
        # dict's own |= writes past __setitem__: the keys would never reach a checkpoint
        self.update(other)
        return self

    def __or__(self, other: Any) -> Any:
        if not isinstance(other, dict):
            return NotImplemented
        return {**self, **other}

    def __ror__(self, other: Any) -> Any:
        if not isinstance(other, dict):
            return NotImplemented
        return {**other, **self}

    def copy(self) -> dict[str, Any]:
        """A plain dict of the entries: a snapshot no checkpoint follows."""
        return dict(self)

    # a KeyedState (str keys, changes tracked) where dict's is generic in key and value
    @classmethod
    def fromkeys(  # type: ignore[override]
        cls, iterable: Any, value: Any = None
    ) -> KeyedState:
        keyed = cls()
        for key in iterable:
            keyed[key] = value
        return keyed

    def clear(self) -> None:
        dict.clear(self)
        self.dirty.clear()
        self.cleared = True

    def __repr__(self) -> str:
        return f"KeyedState({dict.__repr__(self)})"


State.register(KeyedState)


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

    #: ``rescale_state(states, new_parallelism) -> list of states``, a staticmethod or
    #: classmethod a component may define: how its per-task state (not its keyed state,
    #: which moves by key group) is shared out when its parallelism changes. ``states``
    #: are the old tasks' states in task order; the result has one state (a mapping) per
    #: new task, in task order. Without it, per-task state whose values are all lists is
    #: split (``split_lists``), empty state stays empty, and anything else refuses the
    #: parallelism change, naming the component.
    rescale_state: Callable[[list[Any], int], list[dict[str, Any]]] | None = None


def split_lists(states: list[Any], new_parallelism: int) -> list[dict[str, Any]]:
    """The default rescale of per-task state: for each key, the old tasks' lists joined
    in task order and cut into ``new_parallelism`` near-equal runs (none lost, none
    repeated). Raises ``TypeError`` for a value that is not a list."""
    joined: dict[Any, list[Any]] = {}
    for state in states:
        for key, value in state.items():
            if not isinstance(value, list):
                raise TypeError(f"per-task state key {key!r} holds a {type(value).__name__}, "
                                "not a list: define rescale_state to share it out")
            joined.setdefault(key, []).extend(value)
    out: list[dict[str, Any]] = [{} for _ in range(new_parallelism)]
    for key, items in joined.items():
        for i in range(new_parallelism):
            out[i][key] = items[len(items) * i // new_parallelism:
                                len(items) * (i + 1) // new_parallelism]
    return out


#: where a TwoPhaseCommitBolt keeps the transactions it prepared and has not yet
#: committed: {checkpoint id: what ``pre_commit`` returned}
PENDING_TRANSACTIONS_KEY = "__two_phase_commit_pending__"
#: where the first task after a parallelism change finds the prepared transactions of the
#: old tasks, committed by its ``init_state`` and then removed: a list of
#: [checkpoint id, what ``pre_commit`` returned] pairs, oldest checkpoint first. A list of
#: pairs, not a mapping by checkpoint id, because every task of a sink prepares under the
#: same checkpoint ids (and lists of str and values are what every serializer encodes)
INHERITED_TRANSACTIONS_KEY = "__two_phase_commit_inherited__"


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

    When the sink's parallelism changes, every old task's prepared transactions go to the
    new first task, which commits them in ``init_state`` (``rescale_state``), so a
    prepared transaction must be committable by any task of the sink.

    Subclasses implement ``begin``, ``pre_commit``, ``commit`` and ``abort``, and may
    use ``self.state`` for state of their own (never under ``PENDING_TRANSACTIONS_KEY``
    or ``INHERITED_TRANSACTIONS_KEY``).
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
        for checkpoint_id, prepared in prepared_transactions(stateful_state):
            self.commit(checkpoint_id, prepared)
        stateful_state[PENDING_TRANSACTIONS_KEY] = {}
        if INHERITED_TRANSACTIONS_KEY in stateful_state:
            del stateful_state[INHERITED_TRANSACTIONS_KEY]
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

    @staticmethod
    def rescale_state(states: list[Any], new_parallelism: int) -> list[dict[str, Any]]:
        """When the sink's parallelism changes: every old task's prepared transactions go
        to the new first task, under ``INHERITED_TRANSACTIONS_KEY`` as [checkpoint id,
        prepared] pairs in checkpoint order (old task order within a checkpoint), and its
        ``init_state`` commits each of them once; its own pending transactions start
        empty. The old tasks' other entries go to it too, a later task's winning on equal
        keys; the other new tasks start empty. Every task of a sink prepares under the
        same checkpoint id, so the transactions are kept as a list, never merged by
        checkpoint id (which would keep one task's and lose the others'). A prepared
        transaction must therefore be committable by any task (the shipped sinks' are: a
        file's names, a Redis write's own fence). States saved before this key existed
        (pending transactions only) are read the same way."""
        first: dict[Any, Any] = {}
        inherited: list[list[Any]] = []
        for state in states:
            for key, value in state.items():
                if key == PENDING_TRANSACTIONS_KEY:
                    inherited.extend([cid, prepared] for cid, prepared in (value or {}).items())
                elif key == INHERITED_TRANSACTIONS_KEY:
                    inherited.extend([cid, prepared] for cid, prepared in value or [])
                else:
                    first[key] = value
        inherited.sort(key=lambda pair: checkpoint_order(pair[0]))  # stable: task order kept
        first[PENDING_TRANSACTIONS_KEY] = {}
        first[INHERITED_TRANSACTIONS_KEY] = inherited
        return [first] + [{} for _ in range(new_parallelism - 1)]


def prepared_transactions(state: Any) -> list[tuple[str, Any]]:
    """The prepared, not yet committed transactions a ``TwoPhaseCommitBolt``'s state
    holds, its own (``PENDING_TRANSACTIONS_KEY``) and those inherited from other tasks in
    a parallelism change (``INHERITED_TRANSACTIONS_KEY``), as (checkpoint id, prepared)
    pairs in checkpoint order: what ``init_state`` commits on a restore."""
    pairs: list[tuple[str, Any]] = [(cid, prepared) for cid, prepared
                                    in state.get(INHERITED_TRANSACTIONS_KEY) or []]
    pairs.extend((state.get(PENDING_TRANSACTIONS_KEY) or {}).items())
    pairs.sort(key=lambda pair: checkpoint_order(pair[0]))
    return pairs


def checkpoint_order(checkpoint_id: str) -> tuple[int, str]:
    """Checkpoint ids end in a number that grows (``ckpt-<n>``, engines make them); this
    orders them by it (``""``, empty state, comes first)."""
    tail = str(checkpoint_id).rsplit("-", 1)[-1]
    return (int(tail), str(checkpoint_id)) if tail.isdigit() else (-1, str(checkpoint_id))
