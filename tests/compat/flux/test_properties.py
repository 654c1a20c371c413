"""The ``--filter`` file is read as java.util.Properties reads it."""

from __future__ import annotations

import pytest

from compat.flux import FluxError, parse_properties, read_properties


def test_separators_comments_and_blanks():
    text = "# comment\n! also a comment\n\na=1\nb: 2\nc 3\n  d  =  four five  \ne\n"
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "four five  ", "e": ""}


def test_continuation_lines_drop_leading_blanks():
    text = "fruits = apple, \\\n         banana, \\\n    pear\nnext=x\n"
    assert parse_properties(text) == {"fruits": "apple, banana, pear", "next": "x"}


def test_even_backslashes_do_not_continue():
    assert parse_properties("path=c:\\\\\nnext=1\n") == {"path": "c:\\", "next": "1"}


def test_escapes_in_keys_and_values():
    text = "key\\ with\\=odd\\:chars = tab\\there\\nnewline \\u00e9t\\u00e9 \\q\n"
    assert parse_properties(text) == {"key with=odd:chars": "tab\there\nnewline été q"}


def test_last_repeated_key_wins_and_crlf_lines():
    assert parse_properties("a=1\r\na=2\r\nb=3") == {"a": "2", "b": "3"}


def test_malformed_unicode_escape_names_the_line(tmp_path):
    path = tmp_path / "bad.properties"
    path.write_text("ok=1\nbad=\\u12\n")
    with pytest.raises(FluxError, match=r"bad\.properties:2: malformed \\uxxxx"):
        read_properties(path)


def test_missing_file_is_one_line(tmp_path):
    with pytest.raises(FluxError, match=r"nope\.properties:1: cannot read the properties file"):
        read_properties(tmp_path / "nope.properties")


def test_latin1_file_is_read(tmp_path):
    path = tmp_path / "latin.properties"
    path.write_bytes("name=caf\xe9\n".encode("iso-8859-1"))
    assert read_properties(path) == {"name": "café"}
