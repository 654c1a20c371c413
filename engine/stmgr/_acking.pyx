# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The Stream Manager's part of at-least-once, compiled: the twin of ``acking.py``, which
it must match result for result, byte for byte and error for error (tests/engine/codec
checks both on random trees of emits, acks and fails).

A tracked batch's rows are planned per destination task by the compiled routing
(``_plan``, ``_routing.pxd``), each copy's key drawn as the pure twin draws it
(``edge_keys``: one ``random.randbytes`` call per sub-batch), the sub-batches written
with their root and edge columns, and emits, acks and fails applied to the compiled XOR
maps (``_xor.pxd``) or forwarded, in order, to the peer tracking the root. A batch whose
columns disagree is refused by the pure twin's own checks before anything changes.

``path_counts()`` says, per public function, how many calls ran here and how many were
handed (in part) to the pure twin's split (``reset_path_counts()`` starts over).
"""

from cpython.bytes cimport PyBytes_AS_STRING
from cpython.dict cimport PyDict_GetItem
from cpython.list cimport PyList_GET_ITEM
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint64_t

from engine.common.codec._scratch cimport (Scratch, put_byte, put_le, put_varint, release, take,
                                    varint_size)
from engine.stmgr._routing cimport _Plan, _Slot, _blob, _head, _plan, _u64
from engine.stmgr._xor cimport RotatingXorMap, XorManager

from random import randbytes as _randbytes

from engine.stmgr import acking as _pure
from engine.stmgr.routing import check_control, check_routing, check_tracked

include "../common/codec/_build_identity.pxi"

ACK, FAIL, EMIT = _pure.ACK, _pure.FAIL, _pure.EMIT
cdef int _ACK = ACK
cdef int _FAIL = FAIL
cdef int _EMIT = EMIT

# -- the output buffer (engine/common/codec/_scratch.pxd), reused from call to call ---------
cdef enum:
    _KEEP = 1 << 20

cdef Scratch _out
_out.initial = 65536
_out.keep = _KEEP

# -- which calls ran here, and which were handed to the pure twin -----------------------
cdef enum:
    _F_ROUTE_TRACKED
    _F_ON_CONTROL
    _NFUNCS

_FUNCTIONS = ("AckTracker.route_tracked", "AckTracker.on_control")
include "../common/codec/_path_counts.pxi"

# -- acking ----------------------------------------------------------------------------
cdef class ControlOut:
    """Control entries waiting to go to one destination (a peer or a local spout), as
    columns of (kind, root task, root key, tuple key), encoded straight from them."""

    cdef int32_t* _kinds
    cdef int32_t* _tasks
    cdef uint64_t* _roots
    cdef uint64_t* _keys
    cdef Py_ssize_t _n, _cap

    def __cinit__(self):
        self._kinds = NULL
        self._tasks = NULL
        self._roots = NULL
        self._keys = NULL
        self._n = 0
        self._cap = 0

    def __dealloc__(self):
        PyMem_Free(self._kinds)
        PyMem_Free(self._tasks)
        PyMem_Free(self._roots)
        PyMem_Free(self._keys)

    cdef int push(self, int32_t kind, int32_t task, uint64_t root, uint64_t key) except -1:
        cdef Py_ssize_t cap
        cdef void* p
        if self._n == self._cap:
            cap = self._cap * 2 if self._cap else 64
            p = PyMem_Realloc(self._kinds, cap * sizeof(int32_t))
            if p == NULL:
                raise MemoryError()
            self._kinds = <int32_t*>p
            p = PyMem_Realloc(self._tasks, cap * sizeof(int32_t))
            if p == NULL:
                raise MemoryError()
            self._tasks = <int32_t*>p
            p = PyMem_Realloc(self._roots, cap * sizeof(uint64_t))
            if p == NULL:
                raise MemoryError()
            self._roots = <uint64_t*>p
            p = PyMem_Realloc(self._keys, cap * sizeof(uint64_t))
            if p == NULL:
                raise MemoryError()
            self._keys = <uint64_t*>p
            self._cap = cap
        self._kinds[self._n] = kind
        self._tasks[self._n] = task
        self._roots[self._n] = root
        self._keys[self._n] = key
        self._n += 1
        return 0

    def add(self, int32_t kind, int32_t task, uint64_t root, uint64_t key):
        self.push(kind, task, root, key)

    def __len__(self):
        return self._n

    @property
    def entries(self):
        """The entries as ``(kind, root task, root key, tuple key)`` tuples."""
        cdef Py_ssize_t i
        return [(self._kinds[i], self._tasks[i], self._roots[i], self._keys[i])
                for i in range(self._n)]

    @property
    def kinds(self):
        cdef Py_ssize_t i
        return [self._kinds[i] for i in range(self._n)]

    @property
    def root_tasks(self):
        cdef Py_ssize_t i
        return [self._tasks[i] for i in range(self._n)]

    @property
    def root_keys(self):
        cdef Py_ssize_t i
        return [self._roots[i] for i in range(self._n)]

    @property
    def tuple_keys(self):
        cdef Py_ssize_t i
        return [self._keys[i] for i in range(self._n)]

    def encode(self, int32_t src_task):
        """The entries as one ``ControlBatch`` (one root each), as protobuf writes it."""
        cdef Py_ssize_t i, size
        _out.len = 0
        try:
            put_byte(&_out, 0x08)
            put_varint(&_out, <uint64_t><int64_t>src_task)
            if self._n:
                size = 0
                for i in range(self._n):
                    size += varint_size(<uint64_t><int64_t>self._kinds[i])
                put_byte(&_out, 0x12)
                put_varint(&_out, size)
                for i in range(self._n):
                    put_varint(&_out, <uint64_t><int64_t>self._kinds[i])
                put_byte(&_out, 0x1a)
                put_varint(&_out, self._n)
                for i in range(self._n):
                    put_byte(&_out, 1)
                size = 0
                for i in range(self._n):
                    size += varint_size(<uint64_t><int64_t>self._tasks[i])
                put_byte(&_out, 0x22)
                put_varint(&_out, size)
                for i in range(self._n):
                    put_varint(&_out, <uint64_t><int64_t>self._tasks[i])
                put_byte(&_out, 0x2a)
                put_varint(&_out, 8 * self._n)
                for i in range(self._n):
                    put_le(&_out, self._roots[i], 8)
                put_byte(&_out, 0x32)
                put_varint(&_out, 8 * self._n)
                for i in range(self._n):
                    put_le(&_out, self._keys[i], 8)
            return take(&_out)
        finally:
            release(&_out)


cdef class _Keys:
    """Fresh keys for the copies of one sub-batch, drawn at once as ``edge_keys`` draws
    them (``randbytes(8 * m)``, little-endian, 0 becomes 1)."""
    cdef object data
    cdef const unsigned char* p
    cdef Py_ssize_t left

    def __cinit__(self, Py_ssize_t m):
        self.left = m if m > 0 else 0
        self.data = _randbytes(8 * self.left) if self.left else b""
        self.p = <const unsigned char*>PyBytes_AS_STRING(self.data)

    cdef inline uint64_t next(self):
        cdef uint64_t v = 0
        cdef int i
        for i in range(7, -1, -1):
            v = (v << 8) | self.p[i]
        self.p += 8
        self.left -= 1
        return v if v else 1


def edge_keys(Py_ssize_t m):
    """``m`` fresh keys for copies sent, random 64-bit and never 0, drawn with one call
    (``random.randbytes``, little-endian 8 bytes each): both twins draw the same ones."""
    cdef _Keys keys = _Keys(m)
    cdef Py_ssize_t i
    return [keys.next() for i in range(keys.left)]


cdef class AckTracker:
    """Everything acking needs in one Stream Manager; the manager owns the sockets and
    asks :meth:`take_outgoing` for what to send."""

    cdef public object id
    cdef public XorManager xor
    cdef object _owner_of
    cdef public dict to_peers
    cdef public dict to_spouts
    cdef public dict counts
    # per call: root task -> ControlOut of its peer (None: nobody), local maps' outs
    cdef dict _forward
    cdef Py_ssize_t _acks_in, _fails_in, _completed, _failed, _unknown

    def __init__(self, my_id, spout_tasks, timeout_secs, owner_of, buckets=3):
        self.id = my_id
        self.xor = XorManager(spout_tasks, timeout_secs, buckets)
        self._owner_of = owner_of
        self.to_peers = {}
        self.to_spouts = {}
        self.counts = {"acks_in": 0, "fails_in": 0, "completed": 0, "failed": 0,
                       "unknown_root": 0}

    cdef void _begin(self):
        self._forward = {}
        self._acks_in = self._fails_in = self._completed = self._failed = self._unknown = 0

    cdef void _end(self):
        counts = self.counts
        if self._acks_in:
            counts["acks_in"] += self._acks_in
        if self._fails_in:
            counts["fails_in"] += self._fails_in
        if self._completed:
            counts["completed"] += self._completed
        if self._failed:
            counts["failed"] += self._failed
        if self._unknown:
            counts["unknown_root"] += self._unknown
        self._forward = None

    cdef ControlOut _to_spout(self, object task):
        cdef PyObject* found = PyDict_GetItem(self.to_spouts, task)
        cdef ControlOut pending
        if found != NULL:
            return <ControlOut>found
        pending = ControlOut()
        self.to_spouts[task] = pending
        return pending

    cdef object _peer(self, object task):
        """The ControlOut of the peer tracking ``task``'s trees, or None (looked up once
        per task per call)."""
        cdef PyObject* found = PyDict_GetItem(self._forward, task)
        if found != NULL:
            return <object>found
        owner = self._owner_of(task)
        if owner is None or owner == self.id:
            pending = None
        else:
            pending = self.to_peers.get(owner)
            if pending is None:
                pending = self.to_peers[owner] = ControlOut()
        self._forward[task] = pending
        return pending

    cdef int _apply(self, int kind, object task, uint64_t root, uint64_t key) except -1:
        cdef PyObject* found = PyDict_GetItem(self.xor.maps, task)
        cdef RotatingXorMap tracked
        if found != NULL:
            tracked = <RotatingXorMap>found
            if kind == _FAIL:
                if tracked._remove(root):
                    self._to_spout(task).push(_FAIL, task, root, 0)
                    self._failed += 1
            elif tracked._xor(root, key):
                self._to_spout(task).push(_ACK, task, root, 0)
                self._completed += 1
            return 0
        pending = self._peer(task)
        if pending is None:
            self._unknown += 1
            return 0
        (<ControlOut>pending).push(kind, task, root, key)
        return 0

    # -- data ----------------------------------------------------------------------------
    def route_tracked(self, batch, routes):
        """Split a batch that has tracked rows: ``[(task, sub-batch bytes, rows)]``, each
        copy with its own key, each root told of the copies."""
        cdef list route_list = list(routes)
        cdef Py_ssize_t n = len(batch.values), nc = 0, nt = 0, nk = 0, i, j, s, m, c, total
        cdef uint64_t* counts = NULL
        cdef uint64_t* tasks = NULL
        cdef uint64_t* keys = NULL
        cdef uint64_t* combined = NULL
        cdef Py_ssize_t* starts = NULL
        cdef uint64_t edge, key
        cdef int32_t src32, task32
        cdef bint spout_batch
        cdef bint handed = False
        cdef _Plan plan
        cdef _Slot* slot
        cdef RotatingXorMap spout_map = None
        cdef _Keys fresh
        cdef list out = []
        cdef list vals
        cdef ControlOut done
        _calls[_F_ROUTE_TRACKED] += 1
        check_tracked(batch)
        src = batch.src_task_id
        src32 = src
        try:
            counts = _u64(batch.root_counts, &nc)
            tasks = _u64(batch.root_tasks, &nt)
            keys = _u64(batch.root_keys, &nk)
            found = self.xor.maps.get(src)
            if found is not None:
                spout_map = <RotatingXorMap>found
            spout_batch = spout_map is not None and nk == n and nc == n
            if spout_batch:
                j = 0
                for i in range(nt):
                    if <int32_t>tasks[i] == src32:
                        j += 1
                spout_batch = j == n
            if n:
                check_routing(batch, route_list)
                plan = _plan(batch, route_list, n, &handed)
                if handed:
                    _handed[_F_ROUTE_TRACKED] += 1
            else:
                plan = _Plan(1)
            combined = <uint64_t*>PyMem_Malloc((n if n else 1) * sizeof(uint64_t))
            starts = <Py_ssize_t*>PyMem_Malloc((n if n else 1) * sizeof(Py_ssize_t))
            if combined == NULL or starts == NULL:
                raise MemoryError()
            total = 0
            for i in range(n):
                combined[i] = 0
                starts[i] = total
                total += <Py_ssize_t>counts[i]
            vals = list(batch.values)
            stream = batch.stream.SerializeToString()
            for s in range(plan.nslots):
                slot = &plan.slots[s]
                m = slot.n
                _out.len = 0
                try:
                    _head(&_out, stream, src32)
                    for j in range(m):
                        _blob(&_out, 0x1a, <object>PyList_GET_ITEM(vals, slot.rows[j]))
                    if spout_batch:
                        # 8: root_counts, all 1; 9: root_tasks, all src; 10: root_keys
                        put_byte(&_out, 0x42)
                        put_varint(&_out, m)
                        for j in range(m):
                            put_byte(&_out, 1)
                        put_byte(&_out, 0x4a)
                        put_varint(&_out, m * varint_size(<uint64_t><int64_t>src32))
                        for j in range(m):
                            put_varint(&_out, <uint64_t><int64_t>src32)
                        put_byte(&_out, 0x52)
                        put_varint(&_out, 8 * m)
                        for j in range(m):
                            put_le(&_out, keys[slot.rows[j]], 8)
                        # 11: edge_keys, one fresh key per copy, drawn in row order
                        fresh = _Keys(m)
                        put_byte(&_out, 0x5a)
                        put_varint(&_out, 8 * m)
                        for j in range(m):
                            edge = fresh.next()
                            combined[slot.rows[j]] ^= edge
                            put_le(&_out, edge, 8)
                    else:
                        _write_tracked_columns(slot, counts, tasks, keys, starts, combined)
                    out.append((plan.tasks[s], take(&_out), m))
                finally:
                    release(&_out)
            self._begin()
            try:
                if spout_batch:
                    done = None
                    for i in range(n):
                        if spout_map._start(keys[i], combined[i]):
                            if done is None:
                                done = self._to_spout(src)
                            done.push(_ACK, src32, keys[i], 0)
                            self._completed += 1
                else:
                    for i in range(n):
                        c = <Py_ssize_t>counts[i]
                        if not c:
                            continue
                        key = combined[i]
                        for j in range(starts[i], starts[i] + c):
                            task32 = <int32_t>tasks[j]
                            # a spout's row sent nowhere still registers (key 0): its tree
                            # is complete at once; a bolt's row sent nowhere changes nothing
                            if key or task32 == src32:
                                self._apply(_EMIT, task32, keys[j], key)
            finally:
                self._end()
        finally:
            PyMem_Free(counts)
            PyMem_Free(tasks)
            PyMem_Free(keys)
            PyMem_Free(combined)
            PyMem_Free(starts)
        return out

    # -- control -------------------------------------------------------------------------
    def on_control(self, batch):
        """Entries from a local bolt (ACK/FAIL, maybe several roots each) or from a peer
        (EMIT/ACK/FAIL, one root each), applied in order."""
        cdef Py_ssize_t n, nc = 0, nt = 0, nr = 0, nkeys = 0, i, j, pos, c, need
        cdef uint64_t* counts = NULL
        cdef uint64_t* tasks = NULL
        cdef uint64_t* roots = NULL
        cdef uint64_t* keys = NULL
        cdef uint64_t key
        cdef int kind
        cdef list kinds = list(batch.kinds)
        _calls[_F_ON_CONTROL] += 1
        n = len(kinds)
        try:
            counts = _u64(batch.root_counts, &nc)
            tasks = _u64(batch.root_tasks, &nt)
            roots = _u64(batch.root_keys, &nr)
            keys = _u64(batch.tuple_keys, &nkeys)
            need = 0
            for i in range(n):
                need += <Py_ssize_t>counts[i] if i < nc else 1
            if need > nt or need > nr:
                check_control(batch)  # raises its MalformedBatch
            self._begin()
            try:
                pos = 0
                for i in range(n):
                    kind = kinds[i]
                    c = <Py_ssize_t>counts[i] if i < nc else 1
                    key = keys[i] if i < nkeys else 0
                    if kind == _ACK:
                        self._acks_in += 1
                    elif kind == _FAIL:
                        self._fails_in += 1
                    for j in range(pos, pos + c):
                        self._apply(kind, <int32_t>tasks[j], roots[j], key)
                    pos += c
            finally:
                self._end()
        finally:
            PyMem_Free(counts)
            PyMem_Free(tasks)
            PyMem_Free(roots)
            PyMem_Free(keys)

    def take_outgoing(self):
        """What waits for peers and for local spouts; the caller sends it."""
        self.xor.maybe_rotate()
        peers, spouts = self.to_peers, self.to_spouts
        if peers:
            self.to_peers = {}
        if spouts:
            self.to_spouts = {}
        return peers, spouts

    def has_outgoing(self):
        return bool(self.to_peers or self.to_spouts)


cdef int _write_tracked_columns(_Slot* slot, uint64_t* counts, uint64_t* tasks,
                                uint64_t* keys, Py_ssize_t* starts,
                                uint64_t* combined) except -1:
    """Fields 8-11 of a sub-batch of any batch: each row's roots, and a fresh key per
    copy of a tracked row (0 for an untracked one), as the pure twin builds them."""
    cdef Py_ssize_t m = slot.n, j, i, c, size, total = 0, r, tracked = 0
    cdef uint64_t edge
    cdef _Keys fresh
    size = 0
    for j in range(m):
        i = slot.rows[j]
        size += varint_size(counts[i])
        total += <Py_ssize_t>counts[i]
        if counts[i]:
            tracked += 1
    fresh = _Keys(tracked)
    put_byte(&_out, 0x42)
    put_varint(&_out, size)
    for j in range(m):
        put_varint(&_out, counts[slot.rows[j]])
    if total:
        size = 0
        for j in range(m):
            i = slot.rows[j]
            for r in range(starts[i], starts[i] + <Py_ssize_t>counts[i]):
                size += varint_size(<uint64_t><int64_t><int32_t>tasks[r])
        put_byte(&_out, 0x4a)
        put_varint(&_out, size)
        for j in range(m):
            i = slot.rows[j]
            for r in range(starts[i], starts[i] + <Py_ssize_t>counts[i]):
                put_varint(&_out, <uint64_t><int64_t><int32_t>tasks[r])
        put_byte(&_out, 0x52)
        put_varint(&_out, 8 * total)
        for j in range(m):
            i = slot.rows[j]
            for r in range(starts[i], starts[i] + <Py_ssize_t>counts[i]):
                put_le(&_out, keys[r], 8)
    put_byte(&_out, 0x5a)
    put_varint(&_out, 8 * m)
    for j in range(m):
        i = slot.rows[j]
        if counts[i]:
            edge = fresh.next()
            combined[i] ^= edge
            put_le(&_out, edge, 8)
        else:
            put_le(&_out, 0, 8)
    return 0
