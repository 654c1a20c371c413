"""Canonical rows: what a conformance diff compares, in pure Python."""

from __future__ import annotations

import math

import pytest

from conformance.canonical import (
    CaptureRecordError,
    canonical_json,
    canonical_row,
    canonical_value,
    count_rows,
    decode_row,
    describe_comparison,
    per_key_rows,
    round_float,
)
from conformance.model import Comparison


def rec(*values, component="count", stream="default", engine="storm", task=1):
    return {"engine": engine, "case": "c", "run_id": "r1", "component": component,
            "stream": stream, "task": task, "values": list(values)}


def test_row_is_component_stream_and_values_without_provenance():
    a = canonical_row(rec("w", 1, engine="storm", task=3), Comparison())
    b = canonical_row(rec("w", 1, engine="heron", task=7), Comparison())
    assert a == b == ["count", "default", "w", 1]


def test_ignore_columns_drop_values_by_index_including_negative():
    row = canonical_row(rec("w", 1, "2024-01-01T00:00:00"), Comparison(ignore_columns=(-1,)))
    assert row == ["count", "default", "w", 1]
    row = canonical_row(rec("w", 1, 99), Comparison(ignore_columns=(0, 2)))
    assert row == ["count", "default", 1]


def test_ignore_columns_beyond_a_short_row_are_ignored():
    assert canonical_row(rec("w"), Comparison(ignore_columns=(3,))) == ["count", "default", "w"]


def test_dict_keys_sorted_and_tuples_become_lists():
    a = canonical_value({"b": (1, 2), "a": {"y": 1, "x": 2}})
    b = canonical_value({"a": {"x": 2, "y": 1}, "b": [1, 2]})
    assert a == b
    assert canonical_json(a) == '{"a":{"x":2,"y":1},"b":[1,2]}'
    assert list(a) == ["a", "b"]


def test_non_string_dict_keys_are_spelled_as_canonical_json():
    assert canonical_value({2: "b", 1: "a"}) == {"1": "a", "2": "b"}
    assert canonical_value({(1, 2): "t"}) == {"[1,2]": "t"}


def test_floats_rounded_to_significant_digits():
    assert round_float(0.1 + 0.2, 12) == 0.3
    assert round_float(1234567.891, 3) == 1230000.0
    assert round_float(1.23456e-10, 3) == 1.23e-10
    assert canonical_value(0.1 + 0.2) == canonical_value(0.3)
    assert canonical_value([0.1 + 0.2], float_digits=17) != canonical_value([0.3], 17)


def test_negative_zero_is_zero_and_nan_equals_nan():
    assert canonical_json(canonical_value(-0.0)) == canonical_json(canonical_value(0.0)) == "0.0"
    assert canonical_value(float("nan")) == canonical_value(math.nan) == {"$float": "nan"}
    assert canonical_value(float("-inf")) == {"$float": "-inf"}
    assert canonical_value(float("inf")) == {"$float": "inf"}


def test_ints_floats_and_bools_stay_distinct():
    assert canonical_json(canonical_value(1)) == "1"
    assert canonical_json(canonical_value(1.0)) == "1.0"
    assert canonical_json(canonical_value(True)) == "true"


def test_none_bytes_sets_and_other_objects():
    assert canonical_value(None) is None
    assert canonical_value(b"\x00\xff") == {"$bytes": "00ff"}
    assert canonical_value({3, 1, 2}) == [1, 2, 3]
    assert canonical_value(complex(1, 2)) == {"$repr": "(1+2j)"}


def test_canonical_json_round_trips_and_keeps_unicode():
    row = canonical_row(rec("héllo", None, {"k": [1.5]}), Comparison())
    text = canonical_json(row)
    assert "héllo" in text
    assert decode_row(text) == row


def test_streams_filter_keeps_only_named_streams():
    records = [rec("a"), rec("b", stream="errors"), rec("c", component="split")]
    counts = count_rows(records, Comparison(streams=(("count", "default"),)))
    assert list(counts) == ['["count","default","a"]']
    assert sum(count_rows(records, Comparison()).values()) == 3


def test_count_rows_counts_copies():
    counts = count_rows([rec("a", 1), rec("a", 1), rec("b", 1)], Comparison())
    assert counts == {'["count","default","a",1]': 2, '["count","default","b",1]': 1}


def test_per_key_keeps_the_final_value_per_key():
    cmp = Comparison(kind="per_key", key_columns=(0,), value_column=1, reduce="max")
    records = [rec("a", 1), rec("b", 1), rec("a", 2), rec("a", 2), rec("a", 1)]
    assert per_key_rows(records, cmp) == [["count", "default", "a", 2],
                                          ["count", "default", "b", 1]]


@pytest.mark.parametrize("how,expected", [("max", 5), ("min", 1), ("sum", 9), ("last", 3)])
def test_per_key_reductions(how, expected):
    cmp = Comparison(kind="per_key", key_columns=(0,), value_column=1, reduce=how)
    records = [rec("a", 1), rec("a", 5), rec("a", None), rec("a", 3)]
    if how == "last":
        assert per_key_rows(records, cmp) == [["count", "default", "a", 3]]
    else:
        assert per_key_rows(records, cmp) == [["count", "default", "a", expected]]


def test_per_key_separates_components_and_streams():
    cmp = Comparison(kind="per_key", key_columns=(0,), value_column=1)
    rows = per_key_rows([rec("a", 1), rec("a", 7, component="other")], cmp)
    assert rows == [["count", "default", "a", 1], ["other", "default", "a", 7]]


def test_per_key_with_a_missing_column_names_the_record():
    cmp = Comparison(kind="per_key", key_columns=(0,), value_column=3)
    with pytest.raises(CaptureRecordError, match="value column 3"):
        per_key_rows([rec("a", 1)], cmp)


def test_record_without_values_is_an_error_naming_it():
    with pytest.raises(CaptureRecordError, match="without 'values'"):
        canonical_row({"component": "x", "stream": "default"}, Comparison())


def test_describe_comparison_mentions_what_was_normalised():
    notes = describe_comparison(Comparison(kind="per_key", key_columns=(0,), value_column=1,
                                           ignore_columns=(2,), float_digits=6))
    text = "\n".join(notes)
    assert "6 significant digits" in text
    assert "ignored: 2" in text
    assert "max of column 1" in text
