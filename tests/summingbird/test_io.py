"""Stores (Storehaus's merge contract), services, sinks and sources."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest

from compat.summingbird import (
    CollectorSink,
    FunctionService,
    InMemoryService,
    InMemoryStore,
    JobDefinitionError,
    JobRuntimeError,
    JsonLinesSink,
    JsonLinesSource,
    MemoryPlatform,
    SQLiteService,
    SQLiteStore,
    source,
)
from compat.summingbird.monoids import SetUnion, Sum


@pytest.fixture(params=["memory", "sqlite"])
def make_store(request, tmp_path):
    def make(**kwargs):
        if request.param == "memory":
            return InMemoryStore(**kwargs)
        return SQLiteStore(tmp_path / "store.db", **kwargs)
    return make


def test_merge_returns_the_value_just_before_the_merge(make_store):
    store = make_store(semigroup=Sum())
    assert store.merge("a", 2) is None
    assert store.merge("a", 3) == 2
    assert store.get("a") == 5 and store.get("missing") is None
    assert store.multi_merge({"a": 1, "b": 7}) == {"a": 5, "b": None}
    assert store.multi_get(["a", "b", "c"]) == {"a": 6, "b": 7, "c": None}
    assert store.contents() == {"a": 6, "b": 7}


def test_put_all_seeds_and_keys_keep_their_types(make_store):
    store = make_store(semigroup=SetUnion())
    keys = [("user", 1), 1, "1", 2.5, None, True, b"\x00raw"]
    store.put_all({k: frozenset([i]) for i, k in enumerate(keys)})
    store.merge(("user", 1), frozenset([99]))
    contents = store.contents()
    assert set(contents) == set(keys)
    assert contents[("user", 1)] == frozenset({0, 99}) and contents["1"] == frozenset({2})


def test_sqlite_store_persists_and_merges_from_several_processes(tmp_path):
    path = tmp_path / "counts.db"
    SQLiteStore(path, semigroup=Sum()).merge("k", 1)
    reopened = SQLiteStore(path, semigroup=Sum())
    assert reopened.get("k") == 1
    # A store pickles as its path; other processes merge into the same file safely.
    payload = pickle.dumps(reopened).hex()
    code = ("import pickle, sys; store = pickle.loads(bytes.fromhex(sys.argv[1]))\n"
            "for _ in range(50): store.merge('k', 1)")
    workers = [subprocess.Popen([sys.executable, "-c", code, payload]) for _ in range(4)]
    assert [w.wait(timeout=60) for w in workers] == [0, 0, 0, 0]
    assert reopened.get("k") == 1 + 4 * 50


def test_sqlite_store_refuses_unsupported_keys_and_bad_tables(tmp_path):
    store = SQLiteStore(tmp_path / "s.db", semigroup=Sum())
    with pytest.raises(JobDefinitionError, match="keys must be str.*got frozenset"):
        store.merge(frozenset(["a"]), 1)
    with pytest.raises(JobDefinitionError, match="must be an identifier"):
        SQLiteStore(tmp_path / "s.db", table="x; DROP TABLE y")


def test_sqlite_json_codec_and_service_over_a_store(tmp_path):
    store = SQLiteStore(tmp_path / "users.db", table="users", value_codec="json")
    store.put_all({"u1": {"country": "fr"}})
    service = store.as_service()
    assert service.get("u1") == {"country": "fr"} and service.get("u2") is None
    assert SQLiteService(tmp_path / "absent.db").multi_get(["x"]) == {"x": None}
    assert pickle.loads(pickle.dumps(service)).get("u1") == {"country": "fr"}


def test_services_answer_many_keys():
    assert InMemoryService({"a": 1}).multi_get(["a", "b"]) == {"a": 1, "b": None}
    assert FunctionService(lambda k: k * 2 if k else None).multi_get([0, 2]) == {0: None, 2: 4}


def test_json_lines_source_and_sink_round_trip(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text('["a", 1]\n\n{"k": [1, 2]}\n"text"\n', encoding="utf-8")
    items = list(JsonLinesSource(data).read())
    assert items == [("a", 1), {"k": (1, 2)}, "text"]
    assert next(JsonLinesSource(data, arrays_as_tuples=False).read()) == ["a", 1]
    sink = JsonLinesSink(tmp_path / "out.jsonl")
    MemoryPlatform().execute(source(JsonLinesSource(data)).write(sink))
    assert sink.read() == [["a", 1], {"k": [1, 2]}, "text"]
    # A second run of the same sink object appends.
    MemoryPlatform().execute(source(["more"]).write(sink))
    assert sink.read()[-1] == "more" and len(sink.read()) == 4
    sink.close()


def test_json_lines_errors_name_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('1\n{oops\n', encoding="utf-8")
    with pytest.raises(JobRuntimeError, match=r"bad.jsonl:2: not valid JSON"):
        list(JsonLinesSource(bad).read())
    with pytest.raises(JobRuntimeError, match="cannot read JSON-lines source"):
        list(JsonLinesSource(tmp_path / "missing.jsonl").read())
    sink = JsonLinesSink(tmp_path / "o.jsonl")
    with pytest.raises(JobRuntimeError, match="cannot write"):
        sink(object())
    sink.close()


def test_collector_sink_keeps_elements_in_order():
    sink = CollectorSink()
    for x in (3, 1, 2):
        sink(x)
    assert sink.items == [3, 1, 2]


def test_sink_output_is_valid_json_per_line(tmp_path):
    sink = JsonLinesSink(tmp_path / "sets.jsonl")
    sink(("k", frozenset({"b", "a"})))
    sink.close()
    assert [json.loads(line) for line in (tmp_path / "sets.jsonl").read_text().splitlines()] == \
        [["k", ["a", "b"]]]
