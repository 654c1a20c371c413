"""KeyedState: every way a dict changes itself marks the keys it changes, so the
incremental checkpoint (engine/statefulstorage/keyed.py writes only marked keys) saves
what the component wrote: restored, the state is what it was, whichever mutator wrote it.
What makes a new mapping (``|``, ``copy``) gives a plain dict that no checkpoint
follows."""

from __future__ import annotations

import pytest

from compat.storm_api.state import KeyedState
from engine.common.serialization import serializer_for_config
from engine.statefulstorage import LocalFileSystemStorage
from engine.statefulstorage.keyed import KeyedStateStore

BEFORE = {"a": 1, "b": 2, "c": [1]}

#: (name, what it does to the state, the keys it must mark)
MUTATORS = [
    ("setitem", lambda k: k.__setitem__("d", 4), {"d"}),
    ("ior a mapping", lambda k: k.__ior__({"a": 5, "d": 4}), {"a", "d"}),
    ("ior pairs", lambda k: k.__ior__([("a", 5)]), {"a"}),
    ("update a mapping", lambda k: k.update({"a": 5}), {"a"}),
    ("update keywords", lambda k: k.update(a=5, d=4), {"a", "d"}),
    ("update pairs", lambda k: k.update([("a", 5), ("d", 4)]), {"a", "d"}),
    ("update pairs and keywords", lambda k: k.update([("a", 5)], d=4), {"a", "d"}),
    ("setdefault a new key", lambda k: k.setdefault("d", 4), {"d"}),
    ("setdefault then change in place", lambda k: k.setdefault("c", []).append(2), {"c"}),
    ("setdefault a new key then change in place",
     lambda k: k.setdefault("d", []).append(2), {"d"}),
    ("pop", lambda k: k.pop("a"), {"a"}),
    ("pop a missing key with a default", lambda k: k.pop("z", None), set()),
    ("popitem", lambda k: k.popitem(), {"c"}),
    ("delitem", lambda k: k.__delitem__("b"), {"b"}),
    ("touch after a change in place", lambda k: (k["c"].append(2), k.touch("c")), {"c"}),
]


def restored() -> KeyedState:
    keyed = KeyedState({k: list(v) if isinstance(v, list) else v for k, v in BEFORE.items()})
    keyed.dirty.clear()  # as a restore hands it over: nothing changed yet
    return keyed


@pytest.mark.parametrize("mutate, marked", [(m, d) for _, m, d in MUTATORS],
                         ids=[name for name, _, _ in MUTATORS])
def test_every_mutator_marks_the_keys_it_changes(mutate, marked):
    keyed = restored()
    mutate(keyed)
    assert keyed.dirty == marked
    assert not keyed.cleared


def test_clear_marks_everything_for_rewriting():
    keyed = restored()
    keyed.clear()
    keyed["x"] = 1
    assert keyed.cleared and keyed.dirty == {"x"}


def test_in_place_or_returns_the_state_itself():
    keyed = restored()
    same = keyed
    keyed |= {"a": 5}
    assert keyed is same and type(keyed) is KeyedState and keyed["a"] == 5


def test_fromkeys_gives_a_keyed_state_with_every_key_marked():
    keyed = KeyedState.fromkeys(["a", "b"], 0)
    assert type(keyed) is KeyedState
    assert keyed == {"a": 0, "b": 0} and keyed.dirty == {"a", "b"}


def test_or_and_copy_give_plain_dicts_and_leave_the_state_alone():
    keyed = restored()
    for made in (keyed | {"a": 9, "z": 0}, {"a": 9, "z": 0} | keyed, keyed.copy()):
        assert type(made) is dict
        made["new"] = 1
    assert keyed | {"a": 9} == {**BEFORE, "a": 9}
    assert {"a": 9, "z": 0} | keyed == {**BEFORE, "z": 0}
    assert keyed == BEFORE and not keyed.dirty


# -- through the incremental checkpoint ------------------------------------------------

@pytest.fixture
def store(tmp_path):
    return KeyedStateStore(LocalFileSystemStorage(tmp_path / "ckpts"),
                           serializer_for_config({}), "count", 16)


def restore_after(store, mutate) -> tuple[dict, dict]:
    """Save BEFORE, restore it, change it with ``mutate``, save incrementally, restore
    again: (what the component held, what the restore gives)."""
    store.save("ckpt-1", 1, 0, 1, KeyedState(BEFORE), {})
    keyed, chains = store.load("ckpt-1", 0, 1)
    mutate(keyed)
    held = {k: list(v) if isinstance(v, list) else v for k, v in keyed.items()}
    store.save("ckpt-2", 1, 0, 1, keyed, chains)
    again, _ = store.load("ckpt-2", 0, 1)
    return held, dict(again)


def test_in_place_or_reaches_the_incremental_checkpoint(store):
    def merge(keyed):
        keyed |= {"a": 5, "b": 2}

    store.save("ckpt-1", 1, 0, 1, KeyedState({"a": 1}), {})
    keyed, chains = store.load("ckpt-1", 0, 1)
    merge(keyed)
    store.save("ckpt-2", 1, 0, 1, keyed, chains)
    again, _ = store.load("ckpt-2", 0, 1)
    assert dict(again) == {"a": 5, "b": 2}


@pytest.mark.parametrize("mutate", [m for _, m, _ in MUTATORS] + [KeyedState.clear],
                         ids=[name for name, _, _ in MUTATORS] + ["clear"])
def test_a_restore_gives_what_every_mutator_wrote(store, mutate):
    held, restored_state = restore_after(store, mutate)
    assert restored_state == held
