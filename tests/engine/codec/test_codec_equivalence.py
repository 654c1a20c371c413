"""The compiled tuple path and its pure-Python twin give the same bytes, hashes, Tuples
and errors on random input: every value type the msgpack serializer accepts (and some it
rejects), empty batches, huge values and malformed rows.

The random rows are mostly what topologies emit (words and counts, str, int within 64
bits, float, bytes, bool, None, small lists, tuples and dicts of those), which the
compiled code handles itself; about one in twenty carries a value it hands to the pure
twin (an int past 64 bits, a subclass, a bytearray, an ext type, a lone surrogate,
nesting around msgpack's limit, a type msgpack refuses), and explicit examples make
sure every run compares some, so both paths are compared. Each test requires most
calls to have run compiled (``compiled_share``, conftest.py)."""

from __future__ import annotations

import math
import zlib
from collections import namedtuple
from collections.abc import Callable
from datetime import datetime
from types import ModuleType
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compat.storm_api.tuple import Tuple
from engine.common.codec import Undecodable
from engine.common.grouping.hashing import fields_key_hash
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


class FloatSub(float):
    pass


class BytesSub(bytes):
    pass


# every boundary of msgpack's integer encodings, and past 64 bits (msgpack's error)
INT_EDGES = [0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1,
             2**63, 2**64 - 1, 2**64, -1, -32, -33, -128, -129, -32768, -32769, -2**31,
             -2**31 - 1, -2**63, -2**63 - 1]
# lengths around the str/bin/array/map header boundaries
LENGTHS = [0, 1, 15, 16, 31, 32, 255, 256, 65535, 65536]


#: about one draw in this many is odd: a value the compiled code hands to the pure twin
ODD_ONE_IN = 20


def one_in(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n`` draws (shrinking towards False)."""
    return st.integers(0, n - 1).map(lambda k: k == n // 2)


def mostly(common: st.SearchStrategy, odd: st.SearchStrategy,
           n: int = ODD_ONE_IN) -> st.SearchStrategy:
    """``common``, and ``odd`` about once in ``n`` draws."""
    return one_in(n).flatmap(lambda rare: odd if rare else common)


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


# what topologies emit: words and counts, and the exact types msgpack packs as they are
WORDS = ["the", "cow", "jumped", "over", "moon", "an", "apple", "a", "day", "keeps",
         "doctor", "away", "snow", "white", "seven", "dwarfs", "é", "naïve", "日本", ""]
words = st.sampled_from(WORDS)
counts = st.integers(0, 10**6)
int64s = st.integers(-2**63, 2**63 - 1)
# every boundary of msgpack's integer encodings that the compiled code packs itself
COMPILED_INT_EDGES = [i for i in INT_EDGES if -2**63 <= i <= 2**64 - 1]
common_scalars = st.one_of(
    words, counts, int64s, st.sampled_from(COMPILED_INT_EDGES), st.none(), st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.binary(max_size=20))
common_values = st.recursive(
    common_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                            st.dictionaries(st.one_of(words, st.text(max_size=4),
                                                      st.integers(-100, 100)),
                                            inner, max_size=4)),
    max_leaves=8)
# what the compiled code hands whole to the pure twin (msgpack's result or its error)
odd_scalars = st.one_of(
    st.integers(min_value=2**64), st.integers(max_value=-2**63 - 1),
    st.sampled_from([i for i in INT_EDGES if i not in COMPILED_INT_EDGES]),
    st.sampled_from(["\ud800", "a\udfffb"]),  # surrogates: msgpack's UnicodeEncodeError
    st.builds(IntSub, st.integers(-5, 5)), st.builds(StrSub, st.text(max_size=5)),
    st.builds(FloatSub, st.floats()), st.builds(BytesSub, st.binary(max_size=4)),
    st.builds(bytearray, st.binary(max_size=8)),
    st.builds(lambda b: msgpack.ExtType(5, b), st.binary(max_size=4)),
    st.just(datetime(2020, 1, 1)),  # rejected by the serializer: its TypeError
    st.just(object()),
)
odd_values = st.one_of(
    odd_scalars,
    st.builds(DictSub, st.dictionaries(st.text(max_size=3), common_values, max_size=2)),
    st.builds(ListSub, st.lists(common_values, max_size=2)),
    # around the compiled code's nesting limit (500; msgpack's own is 511)
    st.builds(nested, st.sampled_from([499, 500, 501, 510, 511, 512])),
    st.builds(lambda a, b: [a, b], common_values, odd_scalars),
    st.builds(lambda k, v: {k: v}, words, odd_scalars),
    st.builds(lambda v: {v: 1}, st.one_of(st.builds(IntSub, st.integers(-5, 5)),
                                          st.builds(StrSub, st.text(max_size=3)))),
)
values = mostly(common_values, odd_values)


@st.composite
def common_rows(draw: Any, min_size: int = 0) -> Any:
    """A word count's row, or a few common values (a list, sometimes a tuple)."""
    if draw(st.booleans()):
        row = [draw(words), draw(counts)]
    else:
        row = draw(st.lists(common_values, min_size=min_size, max_size=6))
    return tuple(row) if draw(one_in(4)) else row


@st.composite
def odd_rows(draw: Any, min_size: int = 0) -> tuple[Any, int]:
    """A common row with an odd value somewhere in it, and where."""
    row = list(draw(common_rows(min_size=max(0, min_size - 1))))
    at = draw(st.integers(0, len(row)))
    row.insert(at, draw(odd_values))
    return (tuple(row) if draw(st.booleans()) else row), at


rows = mostly(common_rows(), odd_rows().map(lambda row_at: row_at[0]))


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


def test_rows_pack_identically(compiled: ModuleType, pure: ModuleType,
                               compiled_share: Any) -> None:
    @SETTINGS
    @given(rows)
    @example(["word", 2**64])  # (every run compares some odd rows, whatever is drawn)
    @example(("word", IntSub(1)))
    def check(row: Any) -> None:
        same(outcome(compiled.pack_row, row), outcome(pure.pack_row, row))

    compiled_share(compiled, check, "pack_row", handed=("pack_row",))


@st.composite
def keyed_rows(draw: Any) -> tuple[Any, int]:
    """A row and its key's index: mostly a common row and an index within it; else an
    odd value in the row (the key or another one), or an index outside it."""
    if not draw(one_in(ODD_ONE_IN)):
        row = draw(common_rows(min_size=1))
        return row, draw(st.integers(0, len(row) - 1))
    if draw(st.booleans()):
        row, at = draw(odd_rows(min_size=1))
        return row, draw(st.one_of(st.just(at), st.integers(0, len(row) - 1)))
    row = draw(common_rows())
    return row, draw(st.one_of(st.integers(-3, -1), st.integers(len(row), len(row) + 2)))


def test_row_and_key_hash_identical_in_one_pass(compiled: ModuleType, pure: ModuleType,
                                                compiled_share: Any) -> None:
    @SETTINGS
    @given(keyed_rows())
    @example((["word", 2**64], 0))
    @example((["word", 1], 2))
    def check(row_index: tuple[Any, int]) -> None:
        row, index = row_index
        same(outcome(compiled.pack_row_hash, row, index),
             outcome(pure.pack_row_hash, row, index))

    compiled_share(compiled, check, "pack_row_hash", handed=("pack_row_hash",))


def test_key_hashes_identical_and_as_the_stream_manager_computes_them(
        compiled: ModuleType, pure: ModuleType, compiled_share: Any) -> None:
    @SETTINGS
    @given(values)
    @example(StrSub("word"))
    def check(value: Any) -> None:
        got = outcome(compiled.key_hash, value)
        same(got, outcome(pure.key_hash, value))
        if got[0] == "ok":
            assert got[1] == fields_key_hash([value], [0])

    compiled_share(compiled, check, "key_hash", handed=("key_hash",))


@st.composite
def three_with_an_odd(draw: Any) -> list:
    row = draw(st.lists(common_values, min_size=3, max_size=3))
    row[draw(st.integers(0, 2))] = draw(odd_values)
    return row


def test_multi_field_key_hashes_identical(compiled: ModuleType, pure: ModuleType,
                                          compiled_share: Any) -> None:
    @SETTINGS
    @given(mostly(st.lists(common_values, min_size=3, max_size=3), three_with_an_odd()),
           st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=3), min_size=1,
                    max_size=3))
    @example(["word", 1, bytearray(b"x")], [[0], [1, 2]])
    def check(row: list, key_indices: list) -> None:
        a: list[int] = []
        b: list[int] = []
        same(outcome(compiled.append_key_hashes, a, row, key_indices),
             outcome(pure.append_key_hashes, b, row, key_indices))
        assert a == b

    compiled_share(compiled, check, "append_key_hashes", handed=("append_key_hashes",))


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
names = st.one_of(st.sampled_from(["default", "word_spout", "count", "é", ""]),
                  st.text(max_size=12))
int32s = st.one_of(st.integers(1, 64), st.integers(-2**31, 2**31 - 1))
uint32s = st.integers(0, 2**32 - 1)
uint64s = st.integers(0, 2**64 - 1)
blobs = st.one_of(st.binary(max_size=40), st.sampled_from([b"", b"\x00" * 300]))
# what the compiled code leaves to protobuf: not exactly its field's type, or out of range
ODD = {"int32": [2**31, -2**31 - 1, -2**63, True, IntSub(3), 1.0],
       "uint32": [-1, 2**32, False, True, IntSub(3), 2.0],
       "uint64": [-1, 2**64, True, IntSub(3)]}
# TupleBatch's columns: (argument, its type, the argument that must be non-empty for it)
COLUMNS = [(5, "uint32", 4), (6, "uint32", None), (7, "int32", 6), (8, "uint32", None),
           (9, "int32", 8), (10, "uint64", 8)]


@st.composite
def batches(draw: Any) -> tuple:
    """``encode_batch``'s arguments as a collector passes them (values in range), or
    about once in twenty with one of them odd (protobuf's result or error)."""
    n = draw(st.integers(0, 12))
    width = draw(st.sampled_from([0, 0, 1, 2]))
    conv = tuple if draw(st.booleans()) else list
    batch = [draw(int32s), draw(names), draw(names),
             conv(draw(st.lists(blobs, min_size=n, max_size=n))), width,
             conv(draw(st.lists(uint32s, max_size=n * max(width, 1)))),
             conv(draw(st.lists(uint32s, max_size=n)) if draw(st.booleans()) else []),
             draw(st.lists(int32s, max_size=2 * n)),
             draw(st.lists(uint32s, max_size=n)) if draw(st.booleans()) else [],
             draw(st.lists(int32s, max_size=2 * n)), draw(st.lists(uint64s, max_size=2 * n))]
    if draw(one_in(ODD_ONE_IN)):
        what = draw(st.sampled_from(["src", "name", "blob", "width", "column"]))
        if what == "src":
            batch[0] = draw(st.sampled_from(ODD["int32"]))
        elif what == "name":
            batch[draw(st.sampled_from([1, 2]))] = draw(st.sampled_from(
                ["\ud800", "a\udfffb", StrSub("default"), None, b"default"]))
        elif what == "blob":  # a value that is not bytes
            blob = draw(st.one_of(st.text(max_size=3), st.integers(), st.none(),
                                  st.builds(bytearray, st.binary(max_size=3)),
                                  st.builds(BytesSub, st.binary(max_size=3))))
            blob_list = list(batch[3])
            blob_list.insert(draw(st.integers(0, len(blob_list))), blob)
            batch[3] = blob_list
        elif what == "width":
            batch[4] = draw(st.sampled_from([-1, 2**32, True, IntSub(1)]))
        else:  # an entry of a column (written only when its gate is non-empty)
            at, kind, gate = draw(st.sampled_from(COLUMNS))
            if gate is not None and not batch[gate]:
                batch[gate] = 1 if gate == 4 else [1]
            column = list(batch[at])
            column.insert(draw(st.integers(0, len(column))), draw(st.sampled_from(ODD[kind])))
            batch[at] = column
    return tuple(batch)


def test_batches_encode_identically(compiled: ModuleType, pure: ModuleType,
                                    compiled_share: Any) -> None:
    @SETTINGS
    @given(batches())
    @example((2**31, "word_spout", "default", [b"\x92\xa3cow\x01"], 0, [], [], [], [], [], []))
    def check(batch: tuple) -> None:
        got = outcome(compiled.encode_batch, *batch)
        same(got, outcome(pure.encode_batch, *batch))
        if got[0] == "ok":  # and protobuf reads it back as what was written
            message = tuple_pb2.TupleBatch.FromString(got[1])
            assert list(message.values) == list(batch[3])
            assert message.src_task_id == batch[0]

    compiled_share(compiled, check, "encode_batch", handed=("encode_batch",))


@st.composite
def settled_inputs(draw: Any) -> tuple:
    """``encode_control``'s arguments as a bolt's collector passes them (kinds ACK or
    FAIL, one root per input mostly, a tree of several now and then), or about once in
    twenty with one entry odd (protobuf's result or error)."""
    roots = st.tuples(int32s, uint64s)
    trees = st.one_of(st.tuples(roots), st.lists(roots, max_size=4).map(tuple))
    settled = draw(st.lists(st.tuples(st.sampled_from([1, 2, 3]), st.tuples(trees, uint64s)),
                            max_size=30))
    src = draw(int32s)
    if draw(one_in(ODD_ONE_IN)):
        what = draw(st.sampled_from(["src", "kind", "root task", "root key", "key", "shape"]))
        if what == "src":
            src = draw(st.sampled_from(ODD["int32"]))
        else:
            odd = {"kind": (0, 7, True, IntSub(1)), "root task": tuple(ODD["int32"]),
                   "root key": tuple(ODD["uint64"]), "key": tuple(ODD["uint64"]),
                   "shape": ([1, ((), 0)], (1, [(), 0]), (1, (((1, 2),), 0, 3)))}[what]
            value = draw(st.sampled_from(odd))
            entry = {"kind": (value, (((1, 2),), 3)), "root task": (1, (((value, 2),), 3)),
                     "root key": (1, (((1, value),), 3)), "key": (1, (((1, 2),), value)),
                     "shape": value}[what]
            settled.insert(draw(st.integers(0, len(settled))), entry)
    return src, settled


def test_acks_and_fails_encode_identically(compiled: ModuleType, pure: ModuleType,
                                           compiled_share: Any) -> None:
    """A bolt's ControlBatch (its acks and fails, each with the roots of its tree), as
    the compiled path writes it and as protobuf does."""
    @SETTINGS
    @given(settled_inputs())
    @example((7, [(1, (((3, 2**64 - 1),), 5)), (2, (((-4, 0), (9, 1)), 0))]))
    @example((1, [(1, (((3, 2),), 2**64))]))  # (every run compares some of the twin's)
    @example((2**31, [(1, (((3, 2),), 5))]))
    def check(args: tuple) -> None:
        src, settled = args
        got = outcome(compiled.encode_control, src, settled)
        same(got, outcome(pure.encode_control, src, settled))
        if got[0] == "ok":  # and protobuf reads it back as what was written
            message = tuple_pb2.ControlBatch.FromString(got[1])
            assert list(message.kinds) == [kind for kind, _ in settled]
            assert list(message.tuple_keys) == [key for _, (_, key) in settled]

    compiled_share(compiled, check, "encode_control", handed=("encode_control",))


def test_the_common_word_count_batch(compiled: ModuleType, pure: ModuleType) -> None:
    rows_ = [compiled.pack_row(["word", i]) for i in range(1024)]
    hashes = [compiled.key_hash("word")] * 1024
    args = (3, "word_spout", "default", rows_, 1, hashes, [], [], [], [], [])
    assert compiled.encode_batch(*args) == pure.encode_batch(*args)
    assert compiled.encode_batch(3, "s", "d", [], 0, [], [], [], [], [], []) == \
        pure.encode_batch(3, "s", "d", [], 0, [], [], [], [], [], [])


# -- Tuples from decoded rows ------------------------------------------------------------
Words = namedtuple("Word_SpoutDefaultTuple", ["word", "count"])
decoded_rows = mostly(  # (all are the compiled code's: one in ten does not fit)
    # what a word count's batch decodes to: [word, count], or two other values
    st.one_of(st.builds(lambda w, c: [w, c], words, counts),
              st.lists(common_values, min_size=2, max_size=2)),
    # rows that do not fit the stream (each becomes an Undecodable), and undecodable ones
    st.one_of(st.lists(st.integers(), max_size=4), st.tuples(st.integers(), st.integers()),
              st.integers(), st.none(), st.text(max_size=3),
              st.dictionaries(st.text(max_size=2), st.integers(), max_size=3),
              st.builds(lambda e: Undecodable(e), st.just(ValueError("bad bytes")))), 10)


class FieldsOnly:
    """A values type with fields that is not a tuple: every row's TypeError."""
    _fields = ("word", "count")


class NotATuple:
    """A Tuple type that is not a tuple: the compiled code hands the batch to the twin."""

    def __init__(self, *args: Any) -> None:
        self.args = args


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


def test_rows_become_identical_tuples(compiled: ModuleType, pure: ModuleType,
                                      compiled_share: Any) -> None:
    @SETTINGS
    @given(st.lists(decoded_rows, max_size=20),
           st.one_of(st.integers(-10**12, 10**12), st.sampled_from([-2**63, 2**63 - 21])),
           mostly(st.sampled_from([Words, None]), st.just(FieldsOnly), 10),
           mostly(st.just(Tuple), st.just(NotATuple)))
    @example([["cow", 1]], 0, Words, NotATuple)
    def check(batch: list, first: int, values_type: Any, tuple_type: Any) -> None:
        args = (first, batch, "word_spout", "default", 3, values_type, tuple_type)
        a, b = outcome(compiled.make_tuples, *args), outcome(pure.make_tuples, *args)
        if a[0] != "ok" or b[0] != "ok":
            assert a == b
            return
        assert tuples_view(a[1]) == tuples_view(b[1])
        for tup in a[1][0]:
            if type(tup) is not Undecodable:
                assert type(tup) is tuple_type
                assert tup.values.__class__ is (values_type or tuple)

    compiled_share(compiled, check, "make_tuples", handed=("make_tuples",))


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
