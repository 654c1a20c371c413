"""Values shared by both tuple-path implementations, so a caller tells their results
apart the same way whichever runs."""

from __future__ import annotations


class Undecodable:
    """Stands in for a row that did not decode or does not fit its stream: its tuple is
    dropped (and logged) alone, and still takes its id, so acking stays aligned."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


class MalformedBatch(ValueError):
    """A batch whose columns do not agree with each other (counts, hashes or trees of
    other lengths than its rows): raised before any of it is routed or applied, so the
    Stream Manager drops the message whole and no state changes."""


class RowNotPacked(Exception):
    """An emitted row's values could not be serialized (``StreamOut.add_row``): carries
    the serializer's own error, which the collector reports as its SerializationError,
    told apart from errors of the anchors' lookup or of the key hashing, raised as they
    are. Nothing was added to the stream."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error
