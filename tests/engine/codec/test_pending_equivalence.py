"""A spout's pending-tree table, compiled and pure Python, driven through the same random
histories of emits, ack batches and timeouts: the same message ids come back, in the
same order, with the same latencies, the same table left behind, and the same
``MalformedBatch`` for batches whose columns disagree or that name another kind (raised
before anything changes)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.common.codec import MalformedBatch
from engine.common.codec import codec as pure
from engine.messages import tuple_pb2

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ROOT = st.integers(1, 40)  # few roots: batches name pending, settled and unknown ones
IDS = st.one_of(st.integers(), st.text(max_size=5), st.none(), st.tuples(st.integers()))
KIND = st.sampled_from([tuple_pb2.ACK, tuple_pb2.FAIL])


@st.composite
def histories(draw: Any) -> list[tuple]:
    """Steps: ("add", root, id), ("settle", kinds, roots, room), ("expire", age), with
    a clock that moves one tick per step."""
    steps = []
    for _ in range(draw(st.integers(0, 40))):
        what = draw(st.sampled_from(["add", "add", "settle", "expire", "bad"]))
        if what == "add":
            steps.append(("add", draw(ROOT), draw(IDS)))
        elif what == "settle":
            n = draw(st.integers(0, 8))
            steps.append(("settle", draw(st.lists(KIND, min_size=n, max_size=n)),
                          draw(st.lists(ROOT, min_size=n, max_size=n)),
                          draw(st.integers(-1, 4))))
        elif what == "expire":
            steps.append(("expire", draw(st.integers(0, 10))))
        else:  # columns that disagree, or a kind that is neither ACK nor FAIL
            kinds = draw(st.lists(st.one_of(KIND, st.integers(-2, 5)), max_size=4))
            roots = draw(st.lists(ROOT, max_size=4))
            steps.append(("settle", kinds, roots, 4))
    return steps


def replay(module: ModuleType, steps: list[tuple]) -> list:
    table = module.PendingTable()
    seen: list = []
    for clock, step in enumerate(steps):
        now = float(clock)
        try:
            if step[0] == "add":
                if step[1] not in table.entries:  # add_row draws fresh roots
                    table.add(step[1], step[2], now)
                result: Any = None
            elif step[0] == "settle":
                latencies: list[float] = []
                result = (table.settle(step[1], step[2], now, latencies, step[3]), latencies)
            else:
                result = table.expire(now - step[1])
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            result = ("error", type(exc).__name__, str(exc))
        seen.append((result, list(table.entries.items()), len(table)))
    return seen


def test_compiled_and_pure_tables_agree_on_random_histories(compiled: ModuleType,
                                                             compiled_share: Any) -> None:
    @SETTINGS
    @given(histories())
    def check(steps: list) -> None:
        assert replay(compiled, steps) == replay(pure, steps)

    # nothing in the table is ever handed to the pure twin: every call runs compiled
    compiled_share(compiled, check, "PendingTable.settle", "PendingTable.expire")


def test_a_settled_batch_calls_back_in_order_and_skips_what_is_gone(compiled: ModuleType):
    for module in (compiled, pure):
        table = module.PendingTable()
        for root, tup_id, at in ((11, "a", 1.0), (12, "b", 2.0), (13, "c", 3.0)):
            table.add(root, tup_id, at)
        latencies: list[float] = []
        ACK, FAIL = tuple_pb2.ACK, tuple_pb2.FAIL
        # 99 was never pending, 11 is named twice: each root is settled once
        assert table.settle([FAIL, ACK, ACK, ACK], [12, 11, 99, 11], 5.0, latencies, 10) == \
            [(FAIL, "b"), (ACK, "a")], module
        assert latencies == [4.0] and list(table.entries) == [13]
        assert table.expire(2.9) == [] and table.expire(3.0) == ["c"] and len(table) == 0


def test_a_malformed_ack_batch_changes_nothing(compiled: ModuleType):
    for module in (compiled, pure):
        table = module.PendingTable()
        table.add(1, "x", 0.0)
        for kinds, roots in (([tuple_pb2.ACK], [1, 2]), ([tuple_pb2.ACK, 7], [1, 1])):
            with pytest.raises(MalformedBatch):
                table.settle(kinds, roots, 1.0, [], 10)
            assert list(table.entries.items()) == [(1, ("x", 0.0))], module
