"""The compiled tuple path and its pure-Python twin give the same bytes, hashes, Tuples
and errors on random input: every value type the msgpack serializer accepts (and some it
rejects), empty batches, huge values and malformed rows."""

from __future__ import annotations

import math
import zlib
from collections import namedtuple
from datetime import datetime
from types import ModuleType
from typing import Any, Callable

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compat.storm_api.tuple import Tuple
from engine.fastpath import Undecodable
from engine.grouping.hashing import fields_key_hash
from engine.messages import tuple_pb2

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class IntSub(int):
    pass


class StrSub(str):
    pass


class DictSub(dict):
    pass


class ListSub(list):
    pass


# every boundary of msgpack's integer encodings, and past 64 bits (msgpack's error)
INT_EDGES = [0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1,
             2**63, 2**64 - 1, 2**64, -1, -32, -33, -128, -129, -32768, -32769, -2**31,
             -2**31 - 1, -2**63, -2**63 - 1]
# lengths around the str/bin/array/map header boundaries
LENGTHS = [0, 1, 15, 16, 31, 32, 255, 256, 65535, 65536]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from(INT_EDGES),
    st.floats(allow_nan=True, allow_infinity=True), st.text(), st.binary(),
    st.sampled_from(["\ud800", "a\udfffb"]),  # surrogates: msgpack's UnicodeEncodeError
    st.builds(IntSub, st.integers(-5, 5)), st.builds(StrSub, st.text(max_size=5)),
    st.builds(bytearray, st.binary(max_size=8)),
    st.builds(lambda b: msgpack.ExtType(5, b), st.binary(max_size=4)),
    st.just(datetime(2020, 1, 1)),  # rejected by the serializer: its TypeError
    st.just(object()),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.tuples(inner, inner),
                            st.dictionaries(st.one_of(st.text(max_size=4), st.integers()),
                                            inner, max_size=5),
                            st.builds(DictSub, st.dictionaries(st.text(max_size=3), inner,
                                                               max_size=2)),
                            st.builds(ListSub, st.lists(inner, max_size=2))),
    max_leaves=20)
rows = st.one_of(st.lists(values, max_size=6), st.tuples(values, values))


def outcome(fn: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """The result, or the error's type and message: what a caller can observe."""
    try:
        return "ok", fn(*args)
    except Exception as exc:  # noqa: BLE001 - comparing errors is the point
        return type(exc).__name__, str(exc)


def same(a: tuple[str, Any], b: tuple[str, Any]) -> None:
    if a[0] == "ok" and b[0] == "ok":
        assert repr(a[1]) == repr(b[1])
    else:
        assert a == b


@SETTINGS
@given(rows)
def test_rows_pack_identically(compiled: ModuleType, pure: ModuleType, row: Any) -> None:
    same(outcome(compiled.pack_row, row), outcome(pure.pack_row, row))


@SETTINGS
@given(rows, st.integers(-3, 8))
def test_row_and_key_hash_identical_in_one_pass(compiled: ModuleType, pure: ModuleType,
                                                row: Any, index: int) -> None:
    same(outcome(compiled.pack_row_hash, row, index), outcome(pure.pack_row_hash, row, index))


@SETTINGS
@given(values)
def test_key_hashes_identical_and_as_the_stream_manager_computes_them(
        compiled: ModuleType, pure: ModuleType, value: Any) -> None:
    got = outcome(compiled.key_hash, value)
    same(got, outcome(pure.key_hash, value))
    if got[0] == "ok":
        assert got[1] == fields_key_hash([value], [0])


@SETTINGS
@given(st.lists(values, min_size=3, max_size=3),
       st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=3), max_size=3))
def test_multi_field_key_hashes_identical(compiled: ModuleType, pure: ModuleType,
                                          row: list, key_indices: list) -> None:
    a: list[int] = []
    b: list[int] = []
    same(outcome(compiled.append_key_hashes, a, row, key_indices),
         outcome(pure.append_key_hashes, b, row, key_indices))
    assert a == b


@pytest.mark.parametrize("n", LENGTHS)
def test_header_boundaries_of_str_bin_array_map(compiled: ModuleType, pure: ModuleType,
                                                n: int) -> None:
    for value in ("x" * n, "é" * n, b"y" * n, [0] * n, tuple([None] * n),
                  {i: i for i in range(n)}):
        assert compiled.pack_row([value]) == pure.pack_row([value])
        assert compiled.pack_row_hash([1, value], 1) == pure.pack_row_hash([1, value], 1)


def test_huge_values(compiled: ModuleType, pure: ModuleType) -> None:
    """Values past every 16-bit length, a key hashed by zlib rather than the table, and
    the buffer given back after a value larger than the one kept between calls."""
    big = "w" * (3 << 20)
    row = [big, b"\x00" * (70_000), list(range(70_000)), {str(i): i for i in range(70_000)}]
    assert compiled.pack_row(row) == pure.pack_row(row)
    assert compiled.pack_row_hash(row, 0) == pure.pack_row_hash(row, 0)
    assert compiled.key_hash(big) == zlib.crc32(msgpack.packb(big, use_bin_type=True))
    assert compiled.pack_row(["after"]) == pure.pack_row(["after"])


def test_nesting_past_msgpacks_limit_gives_its_error(compiled: ModuleType,
                                                     pure: ModuleType) -> None:
    for depth in (10, 499, 500, 501, 510, 511, 600):
        value: Any = 0
        for _ in range(depth):
            value = [value]
        same(outcome(compiled.pack_row, [value]), outcome(pure.pack_row, [value]))


def test_floats_keep_their_bits(compiled: ModuleType, pure: ModuleType) -> None:
    for x in (0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 1.7976931348623157e308):
        assert compiled.pack_row([x]) == pure.pack_row([x])


# -- TupleBatch encoding -----------------------------------------------------------------
names = st.one_of(st.text(max_size=12), st.sampled_from(["default", "", "\ud800"]))
int32s = st.one_of(st.integers(-2**31, 2**31 - 1), st.sampled_from([-1, 0, 2**31, -2**31 - 1]))
uint32s = st.one_of(st.integers(0, 2**32 - 1), st.sampled_from([-1, 2**32]))
uint64s = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([-1, 2**64]))
blobs = st.one_of(st.binary(max_size=40), st.sampled_from([b"", b"\x00" * 300]))


@st.composite
def batches(draw: Any) -> tuple:
    n = draw(st.integers(0, 12))
    blob_list = draw(st.lists(blobs, min_size=n, max_size=n))
    if draw(st.integers(0, 20)) == 0:  # malformed: a value that is not bytes
        blob_list = [*blob_list, draw(st.one_of(st.text(max_size=3), st.integers(), st.none()))]
    width = draw(st.sampled_from([0, 0, 1, 2, -1]))
    hashes = draw(st.lists(uint32s, max_size=n * max(width, 1)))
    dests = draw(st.lists(uint32s, max_size=n)) if draw(st.booleans()) else []
    dest_tasks = draw(st.lists(int32s, max_size=2 * n))
    roots = draw(st.lists(uint32s, max_size=n)) if draw(st.booleans()) else []
    root_tasks = draw(st.lists(int32s, max_size=2 * n))
    root_keys = draw(st.lists(uint64s, max_size=2 * n))
    as_tuple = draw(st.booleans())
    conv = tuple if as_tuple else list
    return (draw(int32s), draw(names), draw(names), conv(blob_list), width, conv(hashes),
            conv(dests), dest_tasks, roots, root_tasks, root_keys)


@SETTINGS
@given(batches())
def test_batches_encode_identically(compiled: ModuleType, pure: ModuleType,
                                    batch: tuple) -> None:
    got = outcome(compiled.encode_batch, *batch)
    same(got, outcome(pure.encode_batch, *batch))
    if got[0] == "ok":  # and protobuf reads it back as what was written
        message = tuple_pb2.TupleBatch.FromString(got[1])
        assert list(message.values) == list(batch[3])
        assert message.src_task_id == batch[0]


def test_the_common_word_count_batch(compiled: ModuleType, pure: ModuleType) -> None:
    rows_ = [compiled.pack_row(["word", i]) for i in range(1024)]
    hashes = [compiled.key_hash("word")] * 1024
    args = (3, "word_spout", "default", rows_, 1, hashes, [], [], [], [], [])
    assert compiled.encode_batch(*args) == pure.encode_batch(*args)
    assert compiled.encode_batch(3, "s", "d", [], 0, [], [], [], [], [], []) == \
        pure.encode_batch(3, "s", "d", [], 0, [], [], [], [], [], [])


# -- Tuples from decoded rows ------------------------------------------------------------
Words = namedtuple("Word_SpoutDefaultTuple", ["word", "count"])
decoded_rows = st.one_of(
    st.lists(st.one_of(st.text(max_size=4), st.integers()), min_size=2, max_size=2),
    st.lists(st.integers(), max_size=4), st.tuples(st.integers(), st.integers()),
    st.integers(), st.none(), st.text(max_size=3), st.dictionaries(st.text(max_size=2),
                                                                  st.integers(), max_size=3),
    st.builds(lambda e: Undecodable(e), st.just(ValueError("bad bytes"))))


def tuples_view(result: tuple[list, bool]) -> tuple:
    """What a bolt can observe: each Tuple's type, fields and values' type, or the error
    an Undecodable carries."""
    out = []
    for item in result[0]:
        if type(item) is Undecodable:
            out.append(("undecodable", type(item.error).__name__, str(item.error)))
        else:
            out.append((type(item), tuple(item), type(item.values)))
    return tuple(out), result[1]


@SETTINGS
@given(st.lists(decoded_rows, max_size=20),
       st.one_of(st.integers(-10**12, 10**12), st.sampled_from([-2**63, 2**63 - 21])),
       st.sampled_from([Words, None]))
def test_rows_become_identical_tuples(compiled: ModuleType, pure: ModuleType, batch: list,
                                      first: int, values_type: Any) -> None:
    a = compiled.make_tuples(first, batch, "word_spout", "default", 3, values_type, Tuple)
    b = pure.make_tuples(first, batch, "word_spout", "default", 3, values_type, Tuple)
    assert tuples_view(a) == tuples_view(b)
    for tup in a[0]:
        if type(tup) is not Undecodable:
            assert type(tup) is Tuple and tup.values.__class__ is (values_type or tuple)


def test_tuples_are_the_storm_api_type_users_see(compiled: ModuleType) -> None:
    (tup,), clean = compiled.make_tuples(7, [["w", 2]], "word_spout", "default", 3, Words,
                                         Tuple)
    assert clean and tup == Tuple("7", "word_spout", "default", 3, Words("w", 2))
    assert tup.values.word == "w" and tup.id == "7" and hash(tup) == hash(tuple(tup))


def test_wrong_width_gives_the_bolts_own_error(compiled: ModuleType, pure: ModuleType) -> None:
    for impl in (compiled, pure):
        (bad,), clean = impl.make_tuples(1, [["only"]], "src", "s", 1, Words, Tuple)
        assert not clean and isinstance(bad.error, ValueError)
        assert str(bad.error) == "1 value(s) for the 2 field(s) ['word', 'count'] of src/s"
