"""The compiled ``StreamOut.add_row`` (a routed emit's row: packed, its tree, its key
hashes) and its pure-Python twin leave the same columns, the same pending table and the
same errors after random sequences of emits: spout emits with message ids, bolt emits
with anchors, untracked emits, unserializable values, unknown anchors, every key layout.

The emitted values are mostly what topologies emit (words and counts, str, int within
64 bits, float, bytes, bool, None, small lists of those), which the compiled code packs
and hashes itself; about one emit in ten carries a value it hands to the pure twin (an
int past 64 bits, a bytearray, a lone surrogate, a subclass, an object msgpack
refuses), and an explicit example makes sure every run compares some, so both are
compared. The test requires most ``add_row`` calls to have run compiled
(``compiled_share``, conftest.py)."""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import msgpack
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.common.codec import RowNotPacked

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class IntSub(int):
    pass


class StrSub(str):
    pass


WORDS = ["the", "cow", "jumped", "over", "moon", "an", "apple", "a", "day", "é", "日本"]
scalars = st.one_of(st.sampled_from(WORDS), st.integers(0, 10**6), st.none(), st.booleans(),
                    st.integers(-2**63, 2**63 - 1), st.floats(), st.text(max_size=12),
                    st.binary(max_size=12))
cells = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
# what the compiled code hands to the pure twin (msgpack's result or its error)
odd_cells = st.one_of(st.integers(min_value=2**64, max_value=2**70),
                      st.integers(min_value=-2**70, max_value=-2**63 - 1), st.just(object()),
                      st.sampled_from(["\ud800"]), st.builds(bytearray, st.binary(max_size=4)),
                      st.builds(IntSub, st.integers(0, 9)),
                      st.builds(StrSub, st.sampled_from(WORDS)),
                      st.builds(lambda c: [c], st.builds(bytearray, st.binary(max_size=2))))


@st.composite
def emitted(draw: Any) -> list:
    """An emit's three values: a word and its count, or other common values; about one
    in ten with an odd value in a random place."""
    if draw(st.booleans()):
        values = [draw(st.sampled_from(WORDS)), draw(st.integers(0, 10**6)), draw(cells)]
    else:
        values = draw(st.lists(cells, min_size=3, max_size=3))
    if draw(st.integers(0, 9)) == 5:  # once in ten (the middle value: no bias to it)
        values[draw(st.integers(0, 2))] = draw(odd_cells)
    return values


KEY_LAYOUTS = [[], [(0,)], [(1,)], [(0, 1)], [(0,), (1,)], [(2,), (0, 1)]]


class Anchors:
    """A bolt's inputs: anchor id -> roots; an unknown id raises, as the collector does."""

    def __init__(self) -> None:
        self.inflight = {f"t{i}": tuple((i % 3 + 1, 1000 + j) for j in range(i % 3))
                         for i in range(6)}

    def roots(self, anchors: list, stream: str) -> tuple:
        seen: dict = {}
        for anchor in anchors:
            if anchor not in self.inflight:
                raise KeyError(f"anchored {stream!r} to unknown {anchor!r}")
            for root in self.inflight[anchor]:
                seen[root] = None
        return tuple(seen)


emits = st.lists(st.tuples(
    emitted(),
    st.one_of(st.none(), st.integers(0, 10**6), st.text(max_size=3)),  # message id
    st.one_of(st.none(), st.lists(st.sampled_from(["t0", "t1", "t2", "t5", "gone"]),
                                  min_size=1, max_size=3)),
), max_size=25)


def view(out: Any) -> tuple:
    return (list(out.values), out.nbytes, list(out.hashes), list(out.root_counts),
            list(out.root_tasks), list(out.root_keys), out.single_key, out.nfields, out.slow,
            out.leaf, out.captured)


def outcome(fn: Any, *args: Any) -> tuple:
    try:
        return "ok", fn(*args)
    except RowNotPacked as exc:
        return "not packed", type(exc.error).__name__, str(exc.error)
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return "error", type(exc).__name__, str(exc)


def test_rows_add_identically(compiled: ModuleType, pure: ModuleType,
                              compiled_share: Any) -> None:
    @SETTINGS
    @given(emits, st.sampled_from(KEY_LAYOUTS), st.integers(1, 6), st.integers(8, 200),
           st.booleans(), st.integers(0, 2**32))
    @example([(["cow", 2**64, None], 5, None), (["cow", 1, None], None, ["t1"])], [(1,)], 4,
             100, True, 0)
    def check(sequence: list, key_indices: list, batch_size: int, batch_bytes: int,
              msgpack_rows: bool, seed: int) -> None:
        rows_add_identically(compiled, pure, sequence, key_indices, batch_size, batch_bytes,
                             msgpack_rows, seed)

    compiled_share(compiled, check, "StreamOut.add_row", handed=("StreamOut.add_row",))


def rows_add_identically(compiled: ModuleType, pure: ModuleType, sequence: list,
                         key_indices: list, batch_size: int, batch_bytes: int,
                         msgpack_rows: bool, seed: int) -> None:
    anchors = Anchors()
    outs, pendings = [], []
    dumps = (lambda values: msgpack.packb(values, use_bin_type=True)) if msgpack_rows else repr
    for module in (compiled, pure):
        out = module.StreamOut("default", ("a", "b", "c"), False, key_indices, [], leaf=False,
                               captured=False)
        pending: dict = {}
        out.bind(7, pending, anchors.roots, batch_size, batch_bytes,
                 dumps if not msgpack_rows else module.pack_row, msgpack_rows)
        outs.append(out)
        pendings.append(pending)
    for step, (values, tup_id, anchor_ids) in enumerate(sequence):
        got = []
        for out in outs:
            random.seed(seed + step)  # the roots' keys: the same draws on both
            got.append((outcome(out.add_row, values, tup_id, anchor_ids), view(out)))
        assert got[0] == got[1]
        if got[0][0][0] == "ok" and got[0][0][1]:  # full: the collector would flush
            for out in outs:
                out.values, out.hashes, out.nbytes = [], [], 0
                out.root_counts, out.root_tasks, out.root_keys = [], [], []
    assert [(k, v[0]) for k, v in pendings[0].items()] == [(k, v[0]) for k, v in
                                                           pendings[1].items()]


def test_of_a_plan_is_the_same_stream(compiled: ModuleType, pure: ModuleType) -> None:
    class Plan:
        def key_field_sets(self, component: str, stream: str) -> list:
            return [("b",), ("a", "c")]

        def consumers(self, component: str, stream: str) -> list:
            return []

    class Thing:
        name = "s"
        fields = ("a", "b", "c")
        direct = False

    made = [m.StreamOut.of(Plan(), Thing(), Thing(), ["g"], capture_all=True)
            for m in (compiled, pure)]
    assert view(made[0]) == view(made[1])
    assert made[0].key_indices == made[1].key_indices == [(1,), (0, 2)]
    assert made[0].groupings == made[1].groupings == ["g"]
