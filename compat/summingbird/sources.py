"""Where a job's data comes from: an in-memory iterable or a JSON-lines file.

A source is data, not a platform object (Summingbird's ``TestPlatform`` lesson): the
same ``Source`` is read by the memory platform on the driver, split into partitions by
the batch platform, and turned into spouts by the streaming planner. The iterable is
copied when the job is written, so the graph stays immutable and can be run again.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from collections.abc import Iterator as IteratorABC
from typing import Any

from . import shapes
from .errors import JobDefinitionError, JobRuntimeError


class Source(ABC):
    """A finite, re-readable collection of elements."""

    @abstractmethod
    def read(self) -> Iterator[Any]:
        """Every element, in order (the order the memory platform uses)."""

    def shape(self) -> shapes.Shape:
        """What is known before running about whether elements are (key, value) pairs."""
        return shapes.UNKNOWN

    def describe(self) -> str:
        return type(self).__name__


class IterableSource(Source):
    """Elements held in memory (copied into a tuple when the job is written)."""

    def __init__(self, data: Iterable[Any]) -> None:
        if isinstance(data, (str, bytes, os.PathLike)):
            raise JobDefinitionError(
                f"source() got {type(data).__name__} {shapes.short_repr(data)}: a string "
                "is not a collection of elements; for a file use JsonLinesSource(path), "
                "for a single element use [element]")
        if isinstance(data, IteratorABC):
            raise JobDefinitionError(
                f"source() got a one-shot iterator ({type(data).__name__}); a job may be "
                "planned and run more than once, so pass a list or another re-readable "
                "collection")
        try:
            items = tuple(data)
        except TypeError:
            raise JobDefinitionError(f"source() needs an iterable or a Source, got "
                                     f"{type(data).__name__}") from None
        for i, x in enumerate(items):
            if x is None:
                raise JobDefinitionError(f"source element {i} is None; None is not a legal "
                                         "element value")
        self.items = items

    def read(self) -> Iterator[Any]:
        return iter(self.items)

    def shape(self) -> shapes.Shape:
        return shapes.of_elements(self.items)

    def describe(self) -> str:
        return f"IterableSource({len(self.items)} elements)"


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


class JsonLinesSource(Source):
    """One JSON document per line of a UTF-8 file; blank lines are skipped.

    JSON arrays become tuples by default (``arrays_as_tuples``), so a line ``["word", 1]``
    is a (key, value) pair ready for keyed operations, as a Python job would write it.
    """

    def __init__(self, path: str | os.PathLike[str], arrays_as_tuples: bool = True) -> None:
        self.path = os.fspath(path)
        self.arrays_as_tuples = arrays_as_tuples

    def parse(self, line: str, lineno: int) -> Any:
        """The element of one non-blank line (``lineno`` counts from 1, for errors)."""
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JobRuntimeError(f"{self.path}:{lineno}: not valid JSON ({exc.msg})") from None
        if value is None:
            raise JobRuntimeError(f"{self.path}:{lineno}: null is not a legal element value")
        return _tuples(value) if self.arrays_as_tuples else value

    def read(self) -> Iterator[Any]:
        try:
            handle = open(self.path, encoding="utf-8")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            raise JobRuntimeError(f"cannot read JSON-lines source {self.path}: "
                                  f"{exc.strerror}") from None
        with handle:
            for lineno, line in enumerate(handle, 1):
                if line.strip():
                    yield self.parse(line, lineno)

    def describe(self) -> str:
        return f"JsonLinesSource({self.path!r})"


def as_source(spec: Any) -> Source:
    """``spec`` as a ``Source``: a Source as it is, any other iterable copied."""
    if isinstance(spec, Source):
        return spec
    return IterableSource(spec)
