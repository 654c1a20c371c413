"""The tuple path in pure Python: the reference the compiled twin (``_codec.pyx``) must
match byte for byte and error for error, and the fallback where it is not built.

What runs per row of a batch lives here, and only that: packing an emitted row's values
with msgpack and hashing its grouping key at the emitting instance, adding the row to its
stream's pending batch (``StreamOut.add_packed``: a spout's new tree root and its entry in
the pending table, a bolt's anchors' roots, the key hashes), encoding the rows into the
``TupleBatch`` that goes on the wire, and turning decoded rows into the streamparse
``Tuple`` objects a bolt receives, and a spout's table of pending trees
(``PendingTable``: settling the roots an ack batch names, expiring the old ones).
Batching policy, validation, errors and routing stay
with their owners (``engine.instance.collector``, ``engine.instance.bolt_loop``).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from random import getrandbits
from typing import Any

import msgpack

from engine.common.codec.markers import MalformedBatch, RowNotPacked, Undecodable
from engine.common.codec.path_counts import path_counts as path_counts
from engine.common.codec.path_counts import reset_path_counts as reset_path_counts
from engine.messages import tuple_pb2

#: False here, True in the compiled twin: which one a caller holds.
COMPILED = False

# The same settings as engine.common.serialization.MsgpackSerializer: str stays str, bytes stay
# bytes. A module-level packer is safe: packing runs no Python code that could re-enter.
_pack = msgpack.Packer(use_bin_type=True, autoreset=True).pack
_crc32 = zlib.crc32
_new = tuple.__new__
_monotonic = time.monotonic


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


def encode_control(src_task: int, settled: Sequence[tuple[int, Any]]) -> bytes:
    """The serialized ``ControlBatch`` of a bolt's settled inputs: ``settled`` holds
    ``(kind, (roots, tuple key))`` per input acked or failed, ``roots`` its ``(root task,
    root key)`` pairs; the columns are built here in bulk rather than per ack."""
    roots = [root for _, (tree, _) in settled for root in tree]
    # the generated stub takes ControlKind members; the kinds are the plain ints they are
    kinds: list[Any] = [kind for kind, _ in settled]
    return tuple_pb2.ControlBatch(src_task_id=src_task,
                                  kinds=kinds,
                                  root_counts=[len(tree) for _, (tree, _) in settled],
                                  root_tasks=[task for task, _ in roots],
                                  root_keys=[key for _, key in roots],
                                  tuple_keys=[key for _, (_, key) in settled]
                                  ).SerializeToString()


def values_of(row: Any, values_type: type | None, width: int, component: str,
              stream: str) -> tuple:
    """One decoded row as the values of a ``Tuple``: a ``values_type`` namedtuple of
    ``width`` fields (built as ``Bolt._make_tuple`` builds it, without its ``__new__``), or
    a plain tuple when the stream's fields are unknown; a row that does not fit raises what
    the bolt's own tuple factory would."""
    if values_type is None:
        return tuple(row)
    if len(row) != width:
        fields = values_type._fields  # type: ignore[attr-defined]  # a namedtuple class
        raise ValueError(f"{len(row)} value(s) for the {width} field(s) "
                         f"{list(fields)} of {component}/{stream}")
    return _new(values_type, row)


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
    # a namedtuple class (``type`` does not declare its ``_fields``)
    width = len(values_type._fields) if values_type is not None else -1  # type: ignore[attr-defined]
    for i, row in enumerate(rows):
        if type(row) is Undecodable:
            append(row)
            clean = False
            continue
        try:
            values = values_of(row, values_type, width, component, stream)
        except Exception as exc:
            append(Undecodable(exc))
            clean = False
            continue
        append(_new(tuple_type, (str(first_id + i), component, stream, task, values)))
    return out, clean


class StreamOut:
    """One declared output stream of an instance's task and the rows waiting to be sent
    (``engine.instance.collector`` owns the policy; the per-row work is here)."""

    __slots__ = ("name", "nfields", "fields", "direct", "key_indices", "single_key",
                 "groupings", "leaf", "captured", "values", "hashes", "dest_counts",
                 "dest_tasks", "slow", "root_counts", "root_tasks", "root_keys", "nbytes",
                 "_task", "_pending", "_anchor_roots", "_batch_size", "_batch_bytes",
                 "_dumps", "_msgpack")

    def __init__(self, name: str, fields: tuple[str, ...], direct: bool,
                 key_indices: list[tuple[int, ...]], groupings: list[Any], leaf: bool,
                 captured: bool | None = None) -> None:
        self.name = name
        self.fields = fields
        self.nfields = len(fields)
        self.direct = direct
        self.key_indices = key_indices
        #: the common case (one grouping field list of one field): its index, else None
        self.single_key = (key_indices[0][0] if len(key_indices) == 1
                           and len(key_indices[0]) == 1 else None)
        self.groupings = groupings
        self.leaf = leaf
        #: emits are recorded by the capture: leaf streams always, every stream when the
        #: run captures all streams (conformance); such emits take the checked path
        self.captured = leaf if captured is None else captured
        self.values: list[bytes] = []
        #: bytes of the serialized rows in ``values`` (a batch is also sent at a byte bound)
        self.nbytes = 0
        self.hashes: list[int] = []
        self.dest_counts: list[int] = []
        self.dest_tasks: list[int] = []
        #: tuple trees of the rows (at-least-once): per row a count, then flattened roots
        self.root_counts: list[int] = []
        self.root_tasks: list[int] = []
        self.root_keys: list[int] = []
        #: emits on this stream need the checked path (captured, direct, explicit destinations)
        self.slow = self.captured or direct
        self.bind(0, {}, None, 1024, 1 << 20, pack_row, True)

    @classmethod
    def of(cls, plan: Any, component: Any, stream: Any, groupings: list[Any],
           capture_all: bool = False) -> StreamOut:
        """The output stream ``stream`` of ``component`` in logical plan ``plan``: its key
        columns (one per distinct field list its fields-grouped consumers group on), and
        whether it is a leaf (no consumers) and captured."""
        key_sets = plan.key_field_sets(component.name, stream.name)
        key_indices = [tuple(list(stream.fields).index(f) for f in fs) for fs in key_sets]
        leaf = not plan.consumers(component.name, stream.name)
        return cls(stream.name, tuple(stream.fields), stream.direct, key_indices, groupings,
                   leaf=leaf, captured=leaf or capture_all)

    def bind(self, task: int, pending_roots: dict, anchor_roots: Callable[[list, str], Any] | None,
             batch_size: int, batch_bytes: int, dumps: Callable[[Any], bytes],
             msgpack_rows: bool) -> None:
        """What ``add_row`` needs of the collector that owns this stream: its task id,
        its spout pending table (root key -> (message id, emit time)), how it turns
        anchors into roots, its batch bounds, its serializer's ``dumps`` and whether that
        is msgpack (then a single key is hashed where it lies in the row's bytes)."""
        self._dumps = dumps
        self._msgpack = msgpack_rows
        self._task = task
        self._pending = pending_roots
        self._anchor_roots = anchor_roots
        self._batch_size = batch_size
        self._batch_bytes = batch_bytes

    def add_row(self, values: Sequence[Any], tup_id: Any, anchors: list | None) -> bool:
        """Add a routed emit's row: its values serialized (``RowNotPacked`` carrying the
        serializer's error when they cannot be, before anything changes); a message id
        makes it the root of a new tree (a random key, entered in the pending table with
        the time), ``anchors`` (given only under acking) give it their trees' roots; then
        the row, its bytes and its key hashes. True when the batch is full (rows or
        bytes) and is to be sent. Raises what the anchors' lookup or the key hashing
        raise, as they raise it."""
        single = self.single_key
        key = None
        try:
            if single is not None and self._msgpack:
                payload, key = _pack(values), _crc32(_pack(values[single]))
            else:
                payload = self._dumps(values)
        except Exception as exc:
            raise RowNotPacked(exc) from exc
        rows = self.values
        if tup_id is not None:  # a spout's tracked tuple: the root of a new tree
            root = getrandbits(64) or 1
            self._pending[root] = (tup_id, _monotonic())
            counts = self.root_counts
            if len(counts) < len(rows):
                counts.extend([0] * (len(rows) - len(counts)))
            counts.append(1)
            self.root_tasks.append(self._task)
            self.root_keys.append(root)
        elif anchors:
            # bound with anchors given only under acking, when the collector passes its lookup
            roots = self._anchor_roots(anchors, self.name)  # type: ignore[misc]
            counts = self.root_counts
            row = len(rows)
            if len(counts) < row:
                counts.extend([0] * (row - len(counts)))
            counts.append(len(roots))
            for task, root_key in roots:
                self.root_tasks.append(task)
                self.root_keys.append(root_key)
        elif self.root_counts:
            self.root_counts.append(0)
        rows.append(payload)
        self.nbytes += len(payload)
        if key is not None:
            self.hashes.append(key)
        elif single is not None:
            self.hashes.append(_crc32(_pack(values[single])))
        elif self.key_indices:
            append_key_hashes(self.hashes, values, self.key_indices)
        return len(rows) >= self._batch_size or self.nbytes >= self._batch_bytes


#: ControlBatch kinds (tuple.proto's ControlKind)
ACK = tuple_pb2.ACK
FAIL = tuple_pb2.FAIL


class PendingTable:
    """A spout task's tuple trees awaiting completion: root key -> (message id, emit
    time), oldest first (a dict keeps insertion order, and emit times only grow), so
    timeouts scan from the front. ``StreamOut.add_row`` enters a new root in
    ``entries``; the spout's executor settles and expires them here and calls the
    spout's own ``ack`` and ``fail`` with what comes back (user code stays Python)."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[int, tuple[Any, float]] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, root: int, tup_id: Any, at: float) -> None:
        self.entries[root] = (tup_id, at)

    def settle(self, kinds: Sequence[int], roots: Sequence[int], now: float,
               latencies: list[float], room: int) -> list[tuple[int, Any]]:
        """The trees an ack batch names, completed (``ACK``) or failed (``FAIL``): each
        root still pending leaves the table and comes back as ``(kind, message id)``, in
        the batch's order; roots no longer pending (timed out already, or named twice)
        are skipped, as Heron does. For the first ``room`` acks, the time from emit to
        ``now`` is appended to ``latencies``. A batch whose columns disagree or that
        names another kind raises ``MalformedBatch`` before anything changes."""
        if len(kinds) != len(roots):
            raise MalformedBatch(f"an ack batch with {len(kinds)} kind(s) for "
                                 f"{len(roots)} root(s)")
        for kind in kinds:
            if type(kind) is not int or (kind != ACK and kind != FAIL):
                raise MalformedBatch(f"an ack batch with kind {kind!r} (not ACK or FAIL)")
        out: list[tuple[int, Any]] = []
        pop = self.entries.pop
        for kind, root in zip(kinds, roots):
            entry = pop(root, None)
            if entry is None:
                continue
            if kind == ACK and room > 0:
                latencies.append(now - entry[1])
                room -= 1
            out.append((kind, entry[0]))
        return out

    def expire(self, deadline: float) -> list[Any]:
        """Remove the trees emitted at or before ``deadline``, oldest first, and return
        their message ids (the spout fails each)."""
        entries = self.entries
        old = []
        for root, (_, at) in entries.items():
            if at > deadline:
                break
            old.append(root)
        return [entries.pop(root)[0] for root in old]
