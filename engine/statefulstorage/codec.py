"""A task's ``State`` as bytes, with the topology's serializer (heronpy pickles it with
the topology's serializer too).

The bytes are the serializer's encoding of ``[keys, values]``. msgpack has no tuples, so
a tuple key comes back as a list; lists in keys are turned back into tuples so that
keys stay hashable and equal to what was stored (values come back as the serializer
gives them, as tuple values do).
"""

from __future__ import annotations

from typing import Any

from compat.storm_api.state import HashMapState, State
from engine.common.serialization import SerializationError, TupleSerializer


class StateNotSerializable(ValueError):
    """A key or value in a task's state cannot be encoded; the message names the task."""


def hashable_key(key: Any) -> Any:
    """A key as stored, back as it was: lists (msgpack's tuples) become tuples again."""
    if isinstance(key, list):
        return tuple(hashable_key(k) for k in key)
    return key


def encode_state(state: State, serializer: TupleSerializer, *, component: str,
                 task: int) -> bytes:
    # keys and values in one pass each, at C speed for a dict-backed state (a per-key
    # ``state[k]`` costs most of a million-key checkpoint)
    keys = list(state.keys())
    values = list(state.values())
    try:
        return serializer.dumps([keys, values])
    except (SerializationError, TypeError, ValueError, OverflowError) as exc:
        raise StateNotSerializable(
            f"the state of {component} task {task} cannot be saved: {exc}") from exc


def decode_state(data: bytes, serializer: TupleSerializer) -> HashMapState:
    keys, values = serializer.loads(data)
    try:
        return HashMapState(zip(keys, values))
    except TypeError:  # a list key (a tuple, through msgpack): make keys hashable
        return HashMapState(zip(map(hashable_key, keys), values))
