"""The tuple path in pure Python: the reference the compiled twin (``_codec.pyx``) must
match byte for byte and error for error, and the fallback where it is not built.

What runs per row of a batch lives here, and only that: packing an emitted row's values
with msgpack and hashing its grouping key at the emitting instance, encoding the rows
into the ``TupleBatch`` that goes on the wire, and turning decoded rows into the
streamparse ``Tuple`` objects a bolt receives. Batching policy, acking and routing stay
with their owners (``engine.instance.collector``, ``engine.instance.executor``).
"""

from __future__ import annotations

import zlib
from typing import Any, Sequence

import msgpack

from engine.fastpath.markers import Undecodable
from engine.messages import tuple_pb2

#: False here, True in the compiled twin: which one a caller holds.
COMPILED = False

# The same settings as engine.serialization.MsgpackSerializer: str stays str, bytes stay
# bytes. A module-level packer is safe: packing runs no Python code that could re-enter.
_pack = msgpack.Packer(use_bin_type=True, autoreset=True).pack
_crc32 = zlib.crc32
_new = tuple.__new__


def pack_row(values: Sequence[Any]) -> bytes:
    """A row's values as msgpack (``MsgpackSerializer.dumps``); msgpack's own errors."""
    return _pack(values)


def key_hash(value: Any) -> int:
    """The fields-grouping hash of one key value: CRC-32 of its msgpack bytes (the same
    in every process, unlike ``hash()``)."""
    return _crc32(_pack(value))


def pack_row_hash(values: Sequence[Any], index: int) -> tuple[bytes, int]:
    """``(pack_row(values), key_hash(values[index]))``: the common emit of a stream with
    one single-field grouping key, in one call."""
    return _pack(values), _crc32(_pack(values[index]))


def append_key_hashes(hashes: list[int], values: Sequence[Any],
                      key_indices: Sequence[Sequence[int]]) -> None:
    """Append one hash per grouping field list: a single field hashes its value, several
    fields hash the list of their values."""
    for indices in key_indices:
        hashes.append(_crc32(_pack([values[i] for i in indices]))
                      if len(indices) > 1 else _crc32(_pack(values[indices[0]])))


def encode_batch(src_task: int, component: str, stream: str, values: Sequence[bytes],
                 key_hash_width: int, key_hashes: Sequence[int], dest_counts: Sequence[int],
                 dest_tasks: Sequence[int], root_counts: Sequence[int],
                 root_tasks: Sequence[int], root_keys: Sequence[int]) -> bytes:
    """The serialized ``TupleBatch`` of an instance's rows (the wire format of
    ``proto/heron/proto/tuple.proto``). ``key_hash_width`` 0 leaves the key columns
    out; an empty column is left out."""
    batch = tuple_pb2.TupleBatch(src_task_id=src_task, values=values)
    batch.stream.id = stream
    batch.stream.component_name = component
    if key_hash_width:
        batch.key_hash_width = key_hash_width
        batch.key_hashes.extend(key_hashes)
    if dest_counts:
        batch.dest_counts.extend(dest_counts)
        batch.dest_tasks.extend(dest_tasks)
    if root_counts:
        batch.root_counts.extend(root_counts)
        batch.root_tasks.extend(root_tasks)
        batch.root_keys.extend(root_keys)
    return batch.SerializeToString()


def make_tuples(first_id: int, rows: Sequence[Any], component: str, stream: str, task: int,
                values_type: type | None, tuple_type: type) -> tuple[list[Any], bool]:
    """``(tuples, clean)``: row ``i`` of a decoded batch as ``tuple_type(str(first_id +
    i), component, stream, task, values)``, the values a ``values_type`` namedtuple (a
    plain tuple when the stream's fields are unknown), built as ``Bolt._make_tuple``
    does. A row that is ``Undecodable`` already, or does not fit the stream (wrong
    number of values, not a sequence), is an ``Undecodable`` in its place carrying the
    error the bolt's own tuple factory would raise; ``clean`` is False when any is."""
    out: list[Any] = []
    append = out.append
    clean = True
    width = len(values_type._fields) if values_type is not None else -1
    for i, row in enumerate(rows):
        if type(row) is Undecodable:
            append(row)
            clean = False
            continue
        try:
            if values_type is None:
                values = tuple(row)
            elif len(row) != width:
                raise ValueError(f"{len(row)} value(s) for the {width} field(s) "
                                 f"{list(values_type._fields)} of {component}/{stream}")
            else:
                values = _new(values_type, row)
        except Exception as exc:
            append(Undecodable(exc))
            clean = False
            continue
        append(_new(tuple_type, (str(first_id + i), component, stream, task, values)))
    return out, clean
