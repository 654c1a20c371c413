"""Stable hashing of items for sketches.

Sketches built in different processes (Spark workers, engine instances) are merged, so
an item must hash to the same bits everywhere. Python's ``hash()`` is salted per
process; this module hashes a canonical byte encoding with BLAKE2b instead.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any


def canonical_bytes(item: Any) -> bytes:
    """A type-tagged encoding: equal items of the supported types encode equally."""
    if isinstance(item, str):
        return b"s" + item.encode("utf-8")
    if isinstance(item, bool):
        return b"?1" if item else b"?0"
    if isinstance(item, int):
        return b"i" + str(item).encode("ascii")
    if isinstance(item, float):
        return b"f" + struct.pack(">d", item)
    if isinstance(item, (bytes, bytearray)):
        return b"b" + bytes(item)
    if item is None:
        return b"n"
    if isinstance(item, tuple):
        parts = [canonical_bytes(x) for x in item]
        return b"t" + b"".join(struct.pack(">I", len(p)) + p for p in parts)
    raise TypeError(f"sketch items must be str, bytes, int, float, bool, None or tuples of "
                    f"these (stable across processes); got {type(item).__name__}")


def hash64(item: Any, key: bytes = b"") -> int:
    """A 64-bit hash of ``item``; different ``key``s give independent hash functions."""
    digest = hashlib.blake2b(canonical_bytes(item), digest_size=8, key=key).digest()
    return int.from_bytes(digest, "big")
