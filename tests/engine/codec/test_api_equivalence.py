"""The component API's per-tuple path, compiled (``engine.instance._api``) against its pure
twin (``engine.instance.api``): a batch's msgpack rows decoded, built and run by
``run_blobs`` give the bolt the same tuples (values of the same types, equal, in the same
order, under the same ids), stop at the same bad row with the same error, and count the
same acks, whatever the rows hold. The strategies draw mostly what topologies emit (words,
counts, timestamps, floats, flags, None, bytes) and some of everything else (nested
arrays and maps, big integers, extension types, truncated and padded rows, text that is
not UTF-8), which the compiled decoder leaves to msgpack. On batches as topologies send
them, at least 80% of ``run_blobs`` calls must decode every row compiled, and some must
hand rows to msgpack (``path_counts``, ``compiled_share`` in conftest.py). The compiled
module comes from the ``compiled_api`` fixture (conftest.py): with
``HERON_REQUIRE_COMPILED=1`` a missing or stale build fails these tests instead of
skipping them."""

from __future__ import annotations

import struct
from collections import namedtuple
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.instance import api as pure_api
from engine.messages import tuple_pb2

Values = namedtuple("WordsDefaultTuple", "word n")

common = st.one_of(st.text(max_size=40), st.integers(-(2 ** 63), 2 ** 64 - 1),
                   st.floats(allow_nan=False), st.booleans(), st.none(),
                   st.binary(max_size=40))
unusual = st.one_of(st.lists(st.integers(-(2 ** 63), 2 ** 63 - 1), max_size=3),
                    st.dictionaries(st.text(max_size=3), st.integers(-100, 100), max_size=2),
                    st.builds(lambda code, data: msgpack.ExtType(code, data),
                              st.integers(0, 127), st.binary(max_size=8)))


#: about one batch in this many holds a row the compiled decoder leaves to msgpack (the
#: pure twin's decoder); the others hold only what topologies emit
ODD_ONE_IN = 20


def one_in(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n`` draws (shrinking towards False)."""
    return st.integers(0, n - 1).map(lambda k: k == n // 2)


@st.composite
def common_blob(draw: Any) -> bytes:
    """A row as topologies emit it: two scalars (a word and a count, ...), which the
    compiled path decodes itself; now and then with a float32, which it decodes too."""
    if draw(one_in(8)):
        return bytes([0x92, 0xca]) + struct.pack(">f", draw(st.floats(width=32))) + b"\x01"
    return msgpack.packb([draw(common), draw(common)], use_bin_type=True)


@st.composite
def odd_blob(draw: Any) -> bytes:
    """A row the compiled path leaves to msgpack: a nested array or map or an extension
    type among its values, cut short, followed by more bytes, or with text that is not
    UTF-8."""
    kind = draw(st.integers(0, 3))
    values = [draw(common) for _ in range(draw(st.integers(0, 3)))]
    values.insert(draw(st.integers(0, len(values))), draw(unusual))
    blob = msgpack.packb(values, use_bin_type=True)
    if kind == 1:
        blob = blob[:draw(st.integers(0, len(blob) - 1))]  # truncated
    elif kind == 2:
        blob = blob + b"\x00"  # a second object after the row
    elif kind == 3:
        blob = bytes([0x92, 0xa2, 0xff, 0xfe, 0x01])  # text that is not UTF-8
    return blob


@st.composite
def batches(draw: Any) -> list[bytes]:
    """A batch's rows as topologies send them: common ones, and in about one batch in
    ``ODD_ONE_IN`` one odd row among them (the first two tests mix every kind of row in
    every batch)."""
    rows = draw(st.lists(common_blob(), max_size=12))
    if draw(one_in(ODD_ONE_IN)):
        rows.insert(draw(st.integers(0, len(rows))), draw(odd_blob()))
    return rows


#: (every run compares some batches the compiled path hands, in part, to msgpack)
ODD_BATCHES = [[msgpack.packb(["a", [1]]), msgpack.packb(["b", 2])],
               [msgpack.packb(["c", 3]), bytes([0x92, 0xa2, 0xff, 0xfe, 0x01]),
                msgpack.packb(["d", 4])[:-1]]]


@st.composite
def blobs(draw: Any) -> bytes:
    kind = draw(st.integers(0, 19))
    width = 2 if kind < 15 else draw(st.integers(0, 4))
    values = [draw(common) if draw(st.integers(0, 9)) else draw(unusual) for _ in range(width)]
    blob = msgpack.packb(values, use_bin_type=True)
    if kind == 16:  # float32, which the packer never writes for a Python float
        blob = bytes([0x92, 0xca]) + struct.pack(">f", draw(st.floats(width=32))) + b"\x01"
    elif kind == 17:
        blob = blob[:draw(st.integers(0, max(0, len(blob) - 1)))]  # truncated
    elif kind == 18:
        blob = blob + b"\x00"  # a second object after the row
    elif kind == 19:
        blob = bytes([0x92, 0xa2, 0xff, 0xfe, 0x01])  # text that is not UTF-8
    return blob


class Stats:
    acked = 0


def core(module: Any) -> Any:
    class Core(module.CollectorCore):
        def __init__(self) -> None:
            super().__init__()
            self.stats = Stats()
    return Core()


class Seen:
    """A stock-shaped bolt that keeps what it was given."""

    auto_ack = True

    def __init__(self) -> None:
        self.tuples: list[tuple] = []
        self._current_tups: list = []

    def process(self, tup: Any) -> None:
        self.tuples.append((type(tup).__name__, tup.id, tup.component, tup.stream, tup.task,
                            type(tup.values).__name__,
                            [(type(v).__name__, repr(v)) for v in tup.values]))


def run_all(module: Any, rows: Any, values_type: Any,
            payload: bytes | None = None) -> tuple[list, list, int]:
    """Every row through run_blobs, going on after each bad row as the bolt loop does:
    (what the bolt saw, the errors with the index of their row, acks counted)."""
    c, bolt = core(module), Seen()
    errors, start = [], 0
    while start < len(rows):
        error = c.run_blobs(bolt, rows, 40, "words", "default", 3, values_type, start, None,
                            payload)
        start += c.ran
        if error is None:
            break
        errors.append((start - 1, type(error).__name__, str(error)))
    return bolt.tuples, errors, c.stats.acked


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(blobs(), max_size=12), st.booleans())
def test_run_blobs_gives_the_bolt_what_the_pure_twin_gives_it(compiled_api, rows, named):
    values_type = Values if named else None
    assert run_all(compiled_api, rows, values_type) == run_all(pure_api, rows, values_type)


def as_received(rows: list[bytes], layout: str) -> tuple[Any, bytes | None]:
    """The rows as the bolt loop hands them over: parsed from the batch, with the batch's
    bytes (``plain``, ``tracked``: with tree columns and key hashes too), with another
    batch's bytes (``other``: not read at all), or with none (``none``)."""
    batch = tuple_pb2.TupleBatch(src_task_id=7, values=rows)
    batch.stream.id, batch.stream.component_name = "default", "words"
    if layout == "tracked":
        batch.root_counts.extend([1] * len(rows))
        batch.root_tasks.extend([7] * len(rows))
        batch.root_keys.extend(range(1, len(rows) + 1))
        batch.edge_keys.extend(range(5, len(rows) + 5))
        batch.key_hash_width = 1
        batch.key_hashes.extend(range(len(rows)))
    payload: bytes | None = batch.SerializeToString()
    if layout == "other":  # a payload holding another number of rows
        payload = tuple_pb2.TupleBatch(values=rows + [b"\x90"]).SerializeToString()
    elif layout == "none":
        payload = None
    return tuple_pb2.TupleBatch.FromString(batch.SerializeToString()).values, payload


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(blobs(), max_size=12), st.booleans(), st.sampled_from(["plain", "tracked",
                                                                       "other"]))
def test_rows_read_from_the_payload_are_what_the_pure_twin_gives(compiled_api, rows, named,
                                                                  layout):
    """The bolt loop hands the compiled path the batch as it arrived: the rows are read
    where they lie in it, whatever else the batch carries (tree columns, key hashes); a
    payload that is not the batch the rows came from is not read at all."""
    values_type = Values if named else None
    parsed, payload = as_received(rows, layout)
    assert run_all(compiled_api, parsed, values_type, payload) == run_all(pure_api, rows,
                                                                           values_type)


RUN_BLOBS = "CollectorCore.run_blobs"


def test_batches_as_topologies_send_them_run_compiled_and_as_the_pure_twin_runs_them(
        compiled_api, compiled_share):
    """Batches of what topologies emit, with an odd row in about one batch in
    ``ODD_ONE_IN``: the bolt gets what the pure twin gives it, and most ``run_blobs``
    calls decode every row compiled (``path_counts``), while some hand rows to msgpack,
    so both are compared (``compiled_share``, conftest.py)."""
    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(batches(), st.booleans(), st.sampled_from(["plain", "tracked", "other", "none"]))
    @example(ODD_BATCHES[0], True, "tracked")
    @example(ODD_BATCHES[1], False, "none")
    def check(rows: list[bytes], named: bool, layout: str) -> None:
        values_type = Values if named else None
        parsed, payload = as_received(rows, layout)
        assert run_all(compiled_api, parsed, values_type, payload) == run_all(
            pure_api, rows, values_type)

    compiled_share(compiled_api, check, RUN_BLOBS, handed=(RUN_BLOBS,))


def test_the_common_rows_are_decoded_by_the_compiled_decoder_itself(compiled_api, monkeypatch):
    """Words and counts never reach msgpack: the compiled path decodes them in C."""
    calls = []
    monkeypatch.setattr(compiled_api, "_loads", lambda blob: calls.append(blob) or
                        msgpack.unpackb(blob, raw=False, strict_map_key=False))
    rows = [msgpack.packb(row, use_bin_type=True) for row in
            (["a", 1], ["bb", -7], ["c", 2 ** 40], ["é", 1.5], ["d", None], [b"x", True])]
    seen, errors, acked = run_all(compiled_api, rows, Values)
    assert (len(seen), errors, acked, calls) == (6, [], 6, [])
    # a row of another shape is msgpack's, with its own error
    seen, errors, _ = run_all(compiled_api, [msgpack.packb(["a", 1, 2])], Values)
    assert seen == [] and errors == [(0, "ValueError", "3 value(s) for the 2 field(s) "
                                      "['word', 'n'] of words/default")]


def test_words_and_counts_are_read_from_the_payload_itself(compiled_api, monkeypatch):
    """Given the batch as it arrived, the compiled path decodes the common rows where they
    lie in it: msgpack is never called, and the bolt sees the rows' own values."""
    calls = []
    monkeypatch.setattr(compiled_api, "_loads", lambda blob: calls.append(blob) or
                        msgpack.unpackb(blob, raw=False, strict_map_key=False))
    rows = [msgpack.packb([f"word{i}" * (i % 3), i * 1000], use_bin_type=True)
            for i in range(50)]
    batch = tuple_pb2.TupleBatch(src_task_id=7, values=rows, root_counts=[1] * 50,
                                 root_tasks=[7] * 50, root_keys=range(1, 51))
    payload = batch.SerializeToString()
    parsed = tuple_pb2.TupleBatch.FromString(payload).values
    seen, errors, acked = run_all(compiled_api, parsed, Values, payload)
    assert (errors, acked, calls) == ([], 50, [])
    assert [v for *_, v in seen] == [[("str", repr(f"word{i}" * (i % 3))), ("int", repr(i * 1000))]
                                     for i in range(50)]


def test_the_pure_twin_decodes_as_the_msgpack_serializer_does():
    from engine.common.serialization import MsgpackSerializer
    blob = msgpack.packb(["a", b"b", {"k": [1]}], use_bin_type=True)
    assert pure_api._loads(blob) == MsgpackSerializer.loads(blob)


@pytest.fixture(params=["compiled", "pure"])
def module(request: pytest.FixtureRequest) -> Any:
    """Each twin in turn: the compiled one through its fixture (required or skipped)."""
    return request.getfixturevalue("compiled_api") if request.param == "compiled" else pure_api


def test_given_ids_are_the_ids_the_tuples_carry(module):
    """At-least-once the bolt loop registers each input under its id before any runs;
    run_blobs then gives each Tuple that same string (made and hashed once, found by
    identity when the bolt acks it), from the row it starts at."""
    class Ids(Seen):
        def process(self, tup: Any) -> None:
            self.tuples.append(tup.id)

    rows = [msgpack.packb([f"w{i}", i], use_bin_type=True) for i in range(5)]
    ids = [str(40 + i) for i in range(5)]
    c, bolt = core(module), Ids()
    assert c.run_blobs(bolt, rows, 40, "words", "default", 3, Values, 2, ids) is None
    assert bolt.tuples == ids[2:] and all(a is b for a, b in zip(bolt.tuples, ids[2:]))
