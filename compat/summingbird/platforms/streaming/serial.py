"""How elements cross process boundaries: pickle first, cloudpickle when pickle cannot.

Tuple values go through the engine's serializer (msgpack by default), which knows
nothing of frozensets, sketches or the user's own classes. So every element travels as
one opaque ``bytes`` field holding ``(lineage, element)``. Plain pickle is fast and
enough for the standard library, installed packages and this library; it cannot pickle
a class that a heron instance received *by value* with the plan (a job written in a test
module or a script), because pickle looks classes up by module and name. cloudpickle
handles those, at about ten times the cost, so it is the fallback and not the rule.
Both produce pickle streams, so ``pickle.loads`` reads either.
"""

from __future__ import annotations

import pickle
from typing import Any

import cloudpickle

from ...errors import JobRuntimeError
from ...shapes import short_repr

_PROTOCOL = pickle.HIGHEST_PROTOCOL


def dumps(value: Any, label: str = "") -> bytes:
    """``value`` as bytes another process of this installation can load."""
    try:
        return pickle.dumps(value, protocol=_PROTOCOL)
    except Exception:  # noqa: BLE001, S110 - PicklingError, AttributeError...: cloudpickle next
        pass
    try:
        data: bytes = cloudpickle.dumps(value, protocol=_PROTOCOL)  # cloudpickle ships no types
        return data
    except Exception as exc:  # noqa: BLE001 - cloudpickle raises many types
        where = f"{label}: " if label else ""
        raise JobRuntimeError(f"{where}cannot send {short_repr(value)} "
                              f"({type(value).__name__}) to another task: it cannot be pickled "
                              f"({type(exc).__name__}: {exc})") from None


def loads(data: bytes) -> Any:
    """The value ``dumps`` wrote."""
    return pickle.loads(data)


def lineage_text(lineage: tuple[int, ...]) -> str:
    """A lineage as the short text the ledger and spools key on."""
    return ",".join(map(str, lineage))
