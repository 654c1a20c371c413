"""The compiled ``StreamOut.add_row`` (a routed emit's row: packed, its tree, its key
hashes) and its pure-Python twin leave the same columns, the same pending table and the
same errors after random sequences of emits: spout emits with message ids, bolt emits
with anchors, untracked emits, unserializable values, unknown anchors, every key layout."""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.fastpath import RowNotPacked

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(),
                    st.text(max_size=12), st.binary(max_size=12), st.just(object()),
                    st.sampled_from(["\ud800"]), st.builds(bytearray, st.binary(max_size=4)))
cells = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
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
    st.lists(cells, min_size=3, max_size=3),
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


@SETTINGS
@given(emits, st.sampled_from(KEY_LAYOUTS), st.integers(1, 6), st.integers(8, 200),
       st.booleans(), st.integers(0, 2**32))
def test_rows_add_identically(compiled: ModuleType, pure: ModuleType, sequence: list,
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
