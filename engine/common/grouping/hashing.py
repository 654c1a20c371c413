"""The deterministic key hash behind fields grouping.

Python's ``hash()`` of a str differs between processes (hash randomisation), so it
cannot route: two emitting processes would send the same key to different tasks.
We hash the msgpack encoding of the grouped values with CRC-32 instead: stable across
processes, machines and Python versions, and computed in C.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import msgpack

_pack = msgpack.Packer(use_bin_type=True, autoreset=True).pack


def fields_key_hash(values: Sequence[Any], indices: Sequence[int]) -> int:
    """Hash of the values at ``indices`` (the grouping fields), as an unsigned 32-bit int."""
    if len(indices) == 1:
        return zlib.crc32(_pack(values[indices[0]]))
    return zlib.crc32(_pack([values[i] for i in indices]))
