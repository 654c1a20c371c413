# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The Stream Manager's per-tuple work, compiled: the twin of ``stmgr.py``, which it must
match result for result, byte for byte and error for error (tests/engine/fastpath checks
it on random batches and random sequences of emits, acks and fails).

How it stays identical: the rows of a batch are split, keyed, encoded and XORed here in
C, but every decision that involves Python state is made with the same Python objects
in the same order as the pure twin: the shuffle start comes from the route's own
``random.Random``, the copies' keys of a sub-batch from one ``random.randbytes`` call
(``edge_keys``: the same draws as the pure twin's), the trees live in Python dicts rotated the same way, and a
batch whose columns disagree is refused by the pure twin's own checks (so the
``MalformedBatch`` message is its, word for word) before anything changes. Routes that
are not plain (no tasks) and batches with explicit destinations are split by the pure
twin's ``split_indices`` itself.

``path_counts()`` says, per public function, how many calls ran here and how many were
handed (in part) to the pure twin's split (``reset_path_counts()`` starts over); the pure
twin's checks, which only name a malformed batch's fault, are not a hand-off.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem, PyDict_DelItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport (PyLong_AsLongLongAndOverflow, PyLong_AsUnsignedLongLong,
                           PyLong_FromUnsignedLongLong)
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport qsort

from engine.fastpath._scratch cimport (Scratch, put_byte, put_le, put_raw, put_varint,
                                       release, take, varint_size)
from engine.fastpath._wire cimport read_varint

import time
from random import randbytes as _randbytes

from engine.fastpath import stmgr as _pure
from engine.fastpath.markers import MalformedBatch

cdef extern from *:
    """
    #ifndef HERON_SOURCES_HASH
    #define HERON_SOURCES_HASH ""
    #endif
    """
    const char* HERON_SOURCES_HASH

#: True here, False in the pure twin: which one a caller holds.
COMPILED = True
#: The hash of the sources this module was built from (setup.py passes it in); compared
#: with the sources in the tree at import by ``engine.fastpath.selection``.
SOURCES_HASH = HERON_SOURCES_HASH.decode("ascii")

SHUFFLE, FIELDS, ALL, LOWEST, DIRECT = _pure.SHUFFLE, _pure.FIELDS, _pure.ALL, _pure.LOWEST, _pure.DIRECT
ACK, FAIL, EMIT = _pure.ACK, _pure.FAIL, _pure.EMIT
cdef int _ACK = ACK
cdef int _FAIL = FAIL
cdef int _EMIT = EMIT
check_routing = _pure.check_routing
check_tracked = _pure.check_tracked
check_control = _pure.check_control

# -- the output buffer (engine/fastpath/_scratch.pxd), reused from call to call ------
cdef enum:
    _KEEP = 1 << 20

cdef Scratch _out
_out.initial = 65536
_out.keep = _KEEP

# -- which calls ran here, and which were handed to the pure twin -----------------------
cdef enum:
    _F_SPLIT_INDICES
    _F_SPLIT_BATCH
    _F_REBATCH
    _F_ROUTE_TRACKED
    _F_ON_CONTROL
    _F_XOR
    _F_START_MANY
    _F_REMOVE
    _F_SPLIT_REBATCHED
    _NFUNCS

_FUNCTIONS = ("split_indices", "split_batch", "rebatch", "AckTracker.route_tracked",
              "AckTracker.on_control", "RotatingXorMap.xor", "RotatingXorMap.start_many",
              "RotatingXorMap.remove", "split_rebatched")
cdef unsigned long long _calls[_NFUNCS]
cdef unsigned long long _handed[_NFUNCS]

def path_counts():
    """``{function: (calls handled here, calls handed to the pure twin)}`` since the
    module was loaded or ``reset_path_counts()``; a call that raises counts where it
    raised. The pure twin's ``path_counts()`` is empty: nothing there runs compiled."""
    cdef int f
    return {_FUNCTIONS[f]: (_calls[f] - _handed[f], _handed[f]) for f in range(_NFUNCS)}

def reset_path_counts():
    """Set every count of ``path_counts()`` to 0."""
    cdef int f
    for f in range(_NFUNCS):
        _calls[f] = 0
        _handed[f] = 0

reset_path_counts()

cdef inline int _blob(uint8_t tag, object data) except -1:
    """A length-delimited field from a bytes object."""
    put_byte(&_out, tag)
    put_varint(&_out, <uint64_t>PyBytes_GET_SIZE(data))
    return put_raw(&_out, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))

cdef inline int _head(object stream, int32_t src) except -1:
    """A TupleBatch's fields 1 (the stream, as serialized) and 2 (the source task)."""
    _blob(0x0a, stream)
    put_byte(&_out, 0x10)
    return put_varint(&_out, <uint64_t><int64_t>src)

# -- C columns of a batch ---------------------------------------------------------------
cdef uint64_t* _u64(object column, Py_ssize_t* n) except? NULL:
    """A repeated integer column as a C array (PyMem_Free it); NULL when empty."""
    cdef Py_ssize_t size = len(column), i = 0
    cdef uint64_t* out
    n[0] = size
    if size == 0:
        return NULL
    out = <uint64_t*>PyMem_Malloc(size * sizeof(uint64_t))
    if out == NULL:
        raise MemoryError()
    cdef long long v
    cdef int overflow
    try:
        for x in column:
            overflow = 0
            v = PyLong_AsLongLongAndOverflow(x, &overflow)
            out[i] = <uint64_t>v if overflow == 0 else <uint64_t>PyLong_AsUnsignedLongLong(x)
            i += 1
    except BaseException:
        PyMem_Free(out)
        raise
    return out

# -- where rows go: per destination task, the rows it gets, in emit order ----------------
cdef struct _Slot:
    Py_ssize_t* rows
    Py_ssize_t n
    Py_ssize_t cap
    bint unsorted

cdef int _cmp(const void* a, const void* b) noexcept nogil:
    cdef Py_ssize_t x = (<Py_ssize_t*>a)[0], y = (<Py_ssize_t*>b)[0]
    return (x > y) - (x < y)

cdef class _Plan:
    """The destination tasks of a batch (first-seen order, as the pure twin's dict) and
    each one's row indices."""
    cdef list tasks
    cdef dict slot_of
    cdef _Slot* slots
    cdef Py_ssize_t nslots, maxslots

    def __cinit__(self, Py_ssize_t maxslots):
        self.tasks = []
        self.slot_of = {}
        self.nslots = 0
        self.maxslots = maxslots if maxslots > 0 else 1
        self.slots = <_Slot*>PyMem_Malloc(self.maxslots * sizeof(_Slot))
        if self.slots == NULL:
            raise MemoryError()

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.slots != NULL:
            for i in range(self.nslots):
                PyMem_Free(self.slots[i].rows)
            PyMem_Free(self.slots)

    cdef Py_ssize_t slot(self, object task) except -1:
        cdef PyObject* found = PyDict_GetItem(self.slot_of, task)
        cdef Py_ssize_t s
        cdef _Slot* grown
        if found != NULL:
            s = <Py_ssize_t><object>found
            if self.slots[s].n:
                self.slots[s].unsorted = True  # a second route into this task
            return s
        if self.nslots == self.maxslots:
            grown = <_Slot*>PyMem_Realloc(self.slots, 2 * self.maxslots * sizeof(_Slot))
            if grown == NULL:
                raise MemoryError()
            self.slots = grown
            self.maxslots *= 2
        s = self.nslots
        self.slots[s].rows = NULL
        self.slots[s].n = 0
        self.slots[s].cap = 0
        self.slots[s].unsorted = False
        self.nslots += 1
        self.slot_of[task] = s
        self.tasks.append(task)
        return s

    cdef int add(self, Py_ssize_t s, Py_ssize_t row) except -1:
        cdef _Slot* slot = &self.slots[s]
        cdef Py_ssize_t cap
        cdef Py_ssize_t* grown
        if slot.n == slot.cap:
            cap = slot.cap * 2 if slot.cap else 64
            grown = <Py_ssize_t*>PyMem_Realloc(slot.rows, cap * sizeof(Py_ssize_t))
            if grown == NULL:
                raise MemoryError()
            slot.rows = grown
            slot.cap = cap
        slot.rows[slot.n] = row
        slot.n += 1
        return 0

    cdef void finish(self):
        cdef Py_ssize_t i
        for i in range(self.nslots):
            if self.slots[i].unsorted:
                qsort(self.slots[i].rows, self.slots[i].n, sizeof(Py_ssize_t), _cmp)

    cdef list rows_list(self, Py_ssize_t s):
        cdef Py_ssize_t i
        cdef _Slot* slot = &self.slots[s]
        return [slot.rows[i] for i in range(slot.n)]


cdef inline bint _plain(list routes):
    """Routes the compiled split handles: every one has tasks (no task is the pure
    twin's error to raise) and none routes by key group (EFFECTIVELY_ONCE fields
    groupings: the pure twin's table lookup)."""
    for route in routes:
        if len(route.tasks) == 0 or getattr(route, "key_groups", None) is not None:
            return False
    return True

cdef object _start_for(object route, object src):
    cdef PyObject* pos = PyDict_GetItem(route.next_by_src, src)
    if pos != NULL:
        return <object>pos
    return route.rng.randrange(len(route.tasks))

cdef _Plan _plan(object batch, list routes, Py_ssize_t n, int f):
    """``split_indices`` as a plan (the caller, public function ``f``, checked the batch
    and the routes)."""
    cdef Py_ssize_t maxslots = 0, nt, k, i, s, width, column, start
    cdef Py_ssize_t nhashes = 0
    cdef uint64_t* hashes = NULL
    cdef Py_ssize_t* bucket_slot = NULL
    cdef _Plan plan
    cdef tuple tasks
    cdef object src, kind
    for route in routes:
        maxslots += len(route.tasks)
    plan = _Plan(maxslots)
    if len(batch.dest_counts) or not _plain(routes):
        # explicit destinations, or a route without tasks: the pure twin's own split
        _handed[f] += 1
        for task, rows in _pure.split_indices(batch, routes):
            s = plan.slot(task)
            for i in rows:
                plan.add(s, i)
        return plan
    src = batch.src_task_id
    width = batch.key_hash_width or 1
    try:
        for route in routes:
            tasks = tuple(route.tasks)
            nt = len(tasks)
            kind = route.kind
            if kind == ALL:
                for t in tasks:
                    s = plan.slot(t)
                    for i in range(n):
                        plan.add(s, i)
            elif kind == LOWEST or (nt == 1 and kind != DIRECT):
                s = plan.slot(tasks[0])
                for i in range(n):
                    plan.add(s, i)
            elif kind == SHUFFLE:
                start = _start_for(route, src)
                for k in range(min(nt, n)):
                    s = plan.slot(tasks[(start + k) % nt])
                    for i in range(k, n, nt):
                        plan.add(s, i)
                route.next_by_src[src] = (start + n) % nt
            elif kind == FIELDS:
                if hashes == NULL:
                    hashes = _u64(batch.key_hashes, &nhashes)
                column = route.key_column if width > 1 else 0
                bucket_slot = <Py_ssize_t*>PyMem_Malloc(nt * sizeof(Py_ssize_t))
                if bucket_slot == NULL:
                    raise MemoryError()
                # tasks enter in the order of the pure twin's zip(tasks, buckets): only
                # those that get a row, so count first
                for k in range(nt):
                    bucket_slot[k] = 0
                for i in range(n):
                    bucket_slot[hashes[i * width + column] % <uint64_t>nt] = 1
                for k in range(nt):
                    bucket_slot[k] = plan.slot(tasks[k]) if bucket_slot[k] else -1
                for i in range(n):
                    plan.add(bucket_slot[hashes[i * width + column] % <uint64_t>nt], i)
                PyMem_Free(bucket_slot)
                bucket_slot = NULL
    finally:
        PyMem_Free(hashes)
        PyMem_Free(bucket_slot)
    plan.finish()
    return plan

# -- routing ---------------------------------------------------------------------------
def split_indices(batch, routes):
    """``[(task, row indices)]``: the tracked (at-least-once) path, where every copy needs
    its own key and its tuple's roots, so destinations are worked out per row."""
    cdef list route_list = list(routes)
    cdef Py_ssize_t n = len(batch.values), s
    cdef _Plan plan
    _calls[_F_SPLIT_INDICES] += 1
    if not n:
        return []
    if not _plain(route_list):
        _handed[_F_SPLIT_INDICES] += 1
        return _pure.split_indices(batch, route_list)
    _pure.check_routing(batch, route_list)
    plan = _plan(batch, route_list, n, _F_SPLIT_INDICES)
    return [(plan.tasks[s], plan.rows_list(s)) for s in range(plan.nslots)]

def split_batch(batch, payload, routes):
    """``[(task, payload_or_values)]``: the original payload when a task gets the whole
    batch (nothing to re-encode), else the list of value blobs it gets."""
    cdef list out = []
    cdef list route_list
    cdef list vals
    cdef list buckets
    cdef Py_ssize_t n, nt, k, i, width, column, start
    cdef Py_ssize_t nhashes = 0
    cdef uint64_t* hashes = NULL
    cdef tuple tasks
    _calls[_F_SPLIT_BATCH] += 1
    values = batch.values
    n = len(values)
    if not n:
        return out
    route_list = list(routes)
    if not _plain(route_list):
        _handed[_F_SPLIT_BATCH] += 1
        return _pure.split_batch(batch, payload, route_list)
    _pure.check_routing(batch, route_list)
    if len(batch.dest_counts):
        _handed[_F_SPLIT_BATCH] += 1
        vals = list(values)
        return [(task, [vals[i] for i in rows])
                for task, rows in _pure.split_indices(batch, route_list)]
    src = batch.src_task_id
    vals = None
    try:
        for route in route_list:
            kind = route.kind
            tasks = tuple(route.tasks)
            nt = len(tasks)
            if kind == ALL:
                for t in tasks:
                    out.append((t, payload))
            elif kind == LOWEST or nt == 1:
                if kind != DIRECT:
                    out.append((tasks[0], payload))
            elif kind == SHUFFLE:
                start = _start_for(route, src)
                if vals is None:
                    vals = list(values)
                for k in range(min(nt, n)):
                    out.append((tasks[(start + k) % nt], vals[k::nt]))
                route.next_by_src[src] = (start + n) % nt
            elif kind == FIELDS:
                width = batch.key_hash_width or 1
                column = route.key_column if width > 1 else 0
                if hashes == NULL:
                    hashes = _u64(batch.key_hashes, &nhashes)
                if vals is None:
                    vals = list(values)
                buckets = [[] for _ in range(nt)]
                for i in range(n):
                    (<list>PyList_GET_ITEM(buckets, hashes[i * width + column] % <uint64_t>nt)
                     ).append(<object>PyList_GET_ITEM(vals, i))
                for k in range(nt):
                    if PyList_GET_SIZE(buckets[k]):
                        out.append((tasks[k], buckets[k]))
    finally:
        PyMem_Free(hashes)
    return out

def rebatch(batch, values):
    """A batch of the same stream and source holding ``values`` (no hash columns: the
    receiver is an instance, which needs only the values)."""
    cdef list vals
    _calls[_F_REBATCH] += 1
    src = batch.src_task_id
    if type(values) is not list or not (-2147483648 <= src <= 2147483647):
        _handed[_F_REBATCH] += 1
        return _pure.rebatch(batch, values)
    vals = <list>values
    for v in vals:
        if type(v) is not bytes:
            _handed[_F_REBATCH] += 1
            return _pure.rebatch(batch, values)
    _out.len = 0
    try:
        _head(batch.stream.SerializeToString(), src)
        for v in vals:
            _blob(0x1a, v)
        return take(&_out)
    finally:
        release(&_out)

# -- split and rebatch from the wire ---------------------------------------------------
# A spout's batch is split for two or more tasks without a Python object per row: the
# payload's fields are located in C (each value's bytes, the packed key hashes) and each
# task's batch is written from them, as ``rebatch`` writes it. Anything but the plain
# at-most-once layout (destination or tree columns, unpacked or repeated hash columns,
# unknown fields, a count that disagrees with what protobuf parsed) takes
# ``split_batch`` and ``rebatch``, the reference.
cdef bint _scan_values(const uint8_t* p, Py_ssize_t n, Py_ssize_t rows, Py_ssize_t* starts,
                       Py_ssize_t* sizes, const uint8_t** hashes, Py_ssize_t* nhashes):
    """Where each value's bytes are in a TupleBatch payload, and its packed key hashes;
    False for any layout but fields 1-5, values and hashes each in the one form protobuf
    writes them."""
    cdef Py_ssize_t at = 0, found = 0
    cdef uint64_t tag, length, ignored
    cdef int field, wire
    hashes[0] = NULL
    nhashes[0] = 0
    while at < n:
        if not read_varint(p, n, &at, &tag):
            return False
        field = <int>(tag >> 3)
        wire = <int>(tag & 7)
        if wire == 0 and (field == 2 or field == 4):
            if not read_varint(p, n, &at, &ignored):
                return False
        elif wire == 2 and (field == 1 or field == 3 or field == 5):
            if not read_varint(p, n, &at, &length) or length > <uint64_t>(n - at):
                return False
            if field == 3:
                if found == rows:
                    return False
                starts[found] = at
                sizes[found] = <Py_ssize_t>length
                found += 1
            elif field == 5:
                if hashes[0] != NULL or length % 4:
                    return False
                hashes[0] = p + at
                nhashes[0] = <Py_ssize_t>(length // 4)
            at += <Py_ssize_t>length
        else:
            return False
    return found == rows


cdef inline uint32_t _hash_at(const uint8_t* h, Py_ssize_t i):
    return (<uint32_t>h[4 * i] | (<uint32_t>h[4 * i + 1] << 8) | (<uint32_t>h[4 * i + 2] << 16)
            | (<uint32_t>h[4 * i + 3] << 24))


cdef object _part(object stream, int32_t src, const uint8_t* p, Py_ssize_t* starts,
                  Py_ssize_t* sizes, Py_ssize_t* rows, Py_ssize_t count):
    """The batch ``rebatch`` writes for the rows listed in ``rows``."""
    cdef Py_ssize_t k, r
    _out.len = 0
    try:
        _head(stream, src)
        for k in range(count):
            r = rows[k]
            put_byte(&_out, 0x1a)
            put_varint(&_out, <uint64_t>sizes[r])
            put_raw(&_out, <const char*>(p + starts[r]), sizes[r])
        return take(&_out)
    finally:
        release(&_out)


def split_rebatched(batch, payload, routes):
    """``[(task, batch payload, rows)]``: ``split_batch`` with each part that is a list of
    values rebatched (``rebatch``), and each part's row count; the payload itself where a
    task gets the whole batch."""
    cdef list out = []
    cdef list route_list
    cdef Py_ssize_t n, nt, k, i, width, column, start, total
    cdef Py_ssize_t nhashes = 0
    cdef const uint8_t* hashes = NULL
    cdef const uint8_t* p
    cdef Py_ssize_t* starts = NULL
    cdef Py_ssize_t* sizes = NULL
    cdef Py_ssize_t* order = NULL
    cdef Py_ssize_t* fill = NULL
    cdef Py_ssize_t* counts = NULL
    cdef uint32_t* bucket = NULL
    cdef tuple tasks
    cdef int32_t src
    _calls[_F_SPLIT_REBATCHED] += 1
    n = len(batch.values)
    if not n:
        return out
    route_list = list(routes)
    if (type(payload) is not bytes or not _plain(route_list) or len(batch.dest_counts)
            or len(batch.root_counts)):
        _handed[_F_SPLIT_REBATCHED] += 1
        return _split_then_rebatch(batch, payload, route_list, n)
    _pure.check_routing(batch, route_list)
    p = <const uint8_t*>PyBytes_AS_STRING(payload)
    starts = <Py_ssize_t*>PyMem_Malloc(2 * n * sizeof(Py_ssize_t))
    order = <Py_ssize_t*>PyMem_Malloc(n * sizeof(Py_ssize_t))
    bucket = <uint32_t*>PyMem_Malloc(n * sizeof(uint32_t))
    if starts == NULL or order == NULL or bucket == NULL:
        PyMem_Free(starts)
        PyMem_Free(order)
        PyMem_Free(bucket)
        raise MemoryError()
    sizes = starts + n
    try:
        if (not _scan_values(p, PyBytes_GET_SIZE(payload), n, starts, sizes, &hashes, &nhashes)
                or nhashes != len(batch.key_hashes)):
            _handed[_F_SPLIT_REBATCHED] += 1
            return _split_then_rebatch(batch, payload, route_list, n)
        src = batch.src_task_id
        stream = None
        for route in route_list:
            kind = route.kind
            tasks = tuple(route.tasks)
            nt = len(tasks)
            if kind == ALL:
                for t in tasks:
                    out.append((t, payload, n))
            elif kind == LOWEST or nt == 1:
                if kind != DIRECT:
                    out.append((tasks[0], payload, n))
            elif kind == SHUFFLE:
                if stream is None:
                    stream = batch.stream.SerializeToString()
                start = _start_for(route, src)
                for k in range(min(nt, n)):
                    total = 0
                    for i in range(k, n, nt):
                        order[total] = i
                        total += 1
                    out.append((tasks[(start + k) % nt],
                                _part(stream, src, p, starts, sizes, order, total), total))
                route.next_by_src[src] = (start + n) % nt
            elif kind == FIELDS:
                if stream is None:
                    stream = batch.stream.SerializeToString()
                width = batch.key_hash_width or 1
                column = route.key_column if width > 1 else 0
                counts = <Py_ssize_t*>PyMem_Malloc(2 * (nt + 1) * sizeof(Py_ssize_t))
                if counts == NULL:
                    raise MemoryError()
                fill = counts + nt + 1
                try:
                    for k in range(nt + 1):
                        counts[k] = 0
                    for i in range(n):
                        bucket[i] = _hash_at(hashes, i * width + column) % <uint32_t>nt
                        counts[bucket[i] + 1] += 1
                    for k in range(nt):
                        counts[k + 1] += counts[k]
                        fill[k] = counts[k]
                    for i in range(n):
                        order[fill[bucket[i]]] = i
                        fill[bucket[i]] += 1
                    for k in range(nt):
                        total = counts[k + 1] - counts[k]
                        if total:
                            out.append((tasks[k], _part(stream, src, p, starts, sizes,
                                                        order + counts[k], total), total))
                finally:
                    PyMem_Free(counts)
                    counts = NULL
            # DIRECT without explicit destinations: nothing (the emitter names the task)
    finally:
        PyMem_Free(starts)
        PyMem_Free(order)
        PyMem_Free(bucket)
    return out


cdef list _split_then_rebatch(object batch, object payload, list routes, Py_ssize_t n):
    """The reference: ``split_batch``, then ``rebatch`` of each list of values."""
    return [(task, rebatch(batch, part), len(part)) if isinstance(part, list)
            else (task, part, n) for task, part in split_batch(batch, payload, routes)]


# -- XOR tracking ----------------------------------------------------------------------
# A table of root key -> running XOR, open addressing with linear probing. Stored values
# are never 0 (an entry is removed when its value returns to 0), so a slot whose value is
# 0 is empty and every key, 0 included, can be stored.
cdef struct _Table:
    uint64_t* keys
    uint64_t* vals
    Py_ssize_t cap  # a power of 2, or 0 before the first entry
    Py_ssize_t n

cdef inline Py_ssize_t _home(uint64_t key, Py_ssize_t cap):
    """The slot a key hashes to (splitmix64's finalizer: roots from the wire need not be
    random)."""
    key ^= key >> 30
    key *= 0xbf58476d1ce4e5b9ULL
    key ^= key >> 27
    key *= 0x94d049bb133111ebULL
    key ^= key >> 31
    return <Py_ssize_t>(key & <uint64_t>(cap - 1))

cdef inline Py_ssize_t _find(_Table* t, uint64_t key):
    cdef Py_ssize_t i, mask = t.cap - 1
    if t.n == 0:
        return -1
    i = _home(key, t.cap)
    while t.vals[i]:
        if t.keys[i] == key:
            return i
        i = (i + 1) & mask
    return -1

cdef int _grow(_Table* t) except -1:
    cdef Py_ssize_t cap = t.cap * 2 if t.cap else 64, i, j, mask = cap - 1
    cdef uint64_t* keys = <uint64_t*>PyMem_Malloc(cap * sizeof(uint64_t))
    cdef uint64_t* vals = <uint64_t*>PyMem_Malloc(cap * sizeof(uint64_t))
    if keys == NULL or vals == NULL:
        PyMem_Free(keys)
        PyMem_Free(vals)
        raise MemoryError()
    for i in range(cap):
        vals[i] = 0
    for i in range(t.cap):
        if t.vals[i]:
            j = _home(t.keys[i], cap)
            while vals[j]:
                j = (j + 1) & mask
            keys[j] = t.keys[i]
            vals[j] = t.vals[i]
    PyMem_Free(t.keys)
    PyMem_Free(t.vals)
    t.keys = keys
    t.vals = vals
    t.cap = cap
    return 0

cdef inline int _insert(_Table* t, uint64_t key, uint64_t val) except -1:
    """A new entry (the caller knows ``key`` is not in ``t``; ``val`` is not 0)."""
    cdef Py_ssize_t i, mask
    if (t.n + 1) * 4 > t.cap * 3:
        _grow(t)
    mask = t.cap - 1
    i = _home(key, t.cap)
    while t.vals[i]:
        i = (i + 1) & mask
    t.keys[i] = key
    t.vals[i] = val
    t.n += 1
    return 0

cdef inline void _delete(_Table* t, Py_ssize_t i):
    """Empty slot ``i``, moving back the entries after it that probed past it."""
    cdef Py_ssize_t mask = t.cap - 1, j = i, home
    while True:
        j = (j + 1) & mask
        if not t.vals[j]:
            break
        home = _home(t.keys[j], t.cap)
        # the entry at j may move to i when i lies cyclically in [home, j)
        if (j > i and (home <= i or home > j)) or (j < i and (home <= i and home > j)):
            t.keys[i] = t.keys[j]
            t.vals[i] = t.vals[j]
            i = j
    t.vals[i] = 0
    t.n -= 1

cdef inline void _clear(_Table* t):
    PyMem_Free(t.keys)
    PyMem_Free(t.vals)
    t.keys = NULL
    t.vals = NULL
    t.cap = 0
    t.n = 0


cdef class RotatingXorMap:
    """Root key -> running XOR, in ``buckets`` generations (newest first). Roots and keys
    are 64-bit unsigned, as on the wire; the buckets are C tables in a ring, so applying
    an emit or an ack allocates nothing."""

    cdef _Table* _tables
    cdef Py_ssize_t _nb
    cdef Py_ssize_t _head  # the newest bucket's index in the ring

    def __cinit__(self, *args, **kwargs):
        self._tables = NULL
        self._nb = 0
        self._head = 0

    def __init__(self, buckets=3):
        cdef Py_ssize_t i
        if buckets < 2:
            raise ValueError("a rotating map needs at least 2 buckets")
        nb = len(range(buckets))  # the pure twin's range(buckets): its errors for odd types
        self._tables = <_Table*>PyMem_Malloc(nb * sizeof(_Table))
        if self._tables == NULL:
            raise MemoryError()
        self._nb = nb
        for i in range(nb):
            self._tables[i].keys = NULL
            self._tables[i].vals = NULL
            self._tables[i].cap = 0
            self._tables[i].n = 0

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self._tables != NULL:
            for i in range(self._nb):
                _clear(&self._tables[i])
            PyMem_Free(self._tables)

    cdef inline _Table* _bucket(self, Py_ssize_t k):
        """Bucket ``k`` of the generations, 0 the newest."""
        return &self._tables[(self._head + k) % self._nb]

    def __len__(self):
        cdef Py_ssize_t i, total = 0
        for i in range(self._nb):
            total += self._tables[i].n
        return total

    cdef int _xor(self, uint64_t root, uint64_t key) except -1:
        """1 when the tree completed (its entry removed), else 0."""
        cdef Py_ssize_t k, i
        cdef _Table* t
        cdef uint64_t value
        for k in range(self._nb):
            t = self._bucket(k)
            i = _find(t, root)
            if i >= 0:  # stored values are never 0 (removed at 0)
                value = t.vals[i] ^ key
                if value:
                    t.vals[i] = value
                    return 0
                _delete(t, i)
                return 1
        if key == 0:
            return 1  # nothing sent and nothing pending: complete at once
        _insert(self._bucket(0), root, key)
        return 0

    cdef int _start(self, uint64_t root, uint64_t key) except -1:
        """``start_many`` for one root: 1 when its tree completed at once."""
        cdef _Table* newest
        cdef Py_ssize_t i
        cdef uint64_t value
        if key:
            newest = self._bucket(0)
            i = _find(newest, root)
            if i < 0:
                _insert(newest, root, key)
                return 0
            value = newest.vals[i] ^ key
            if value:
                newest.vals[i] = value
                return 0
            _delete(newest, i)
            return 1
        return self._xor(root, 0)  # sent nowhere (rare): the full lookup

    cdef int _remove(self, uint64_t root) except -1:
        cdef Py_ssize_t k, i
        cdef _Table* t
        for k in range(self._nb):
            t = self._bucket(k)
            i = _find(t, root)
            if i >= 0:
                _delete(t, i)
                return 1
        return 0

    def xor(self, uint64_t root, uint64_t key):
        """XOR ``key`` into ``root``'s value (creating it in the newest bucket); True when
        the value is now zero: the tree is complete and the entry is removed."""
        _calls[_F_XOR] += 1
        return self._xor(root, key) == 1

    def start_many(self, roots, keys):
        """Apply the first emits of new trees (a local spout's batch); the roots that
        complete at once (sent nowhere, key 0)."""
        cdef list complete = []
        cdef uint64_t r, k
        _calls[_F_START_MANY] += 1
        for root, key in zip(roots, keys):
            r = root
            k = key
            if self._start(r, k):
                complete.append(root)
        return complete

    def remove(self, uint64_t root):
        """Forget ``root`` (a failed tree); True if it was tracked."""
        _calls[_F_REMOVE] += 1
        return self._remove(root) == 1

    def rotate(self):
        """Drop the oldest bucket; returns how many entries were forgotten."""
        cdef _Table* oldest = self._bucket(self._nb - 1)
        cdef Py_ssize_t dropped = oldest.n
        _clear(oldest)
        self._head = (self._head + self._nb - 1) % self._nb  # the emptied one is newest
        return dropped


cdef class XorManager:
    """One rotating map per local spout task, rotated on Heron's schedule: the first
    rotation after the message timeout, then every ``timeout / buckets`` seconds."""

    cdef public dict maps
    cdef public object interval
    cdef public object forgotten
    cdef object _clock
    cdef object _next_rotation

    def __init__(self, spout_tasks, timeout_secs, buckets=3, clock=time.monotonic):
        self.maps = {task: RotatingXorMap(buckets) for task in spout_tasks}
        self.interval = timeout_secs / buckets
        self._clock = clock
        self._next_rotation = clock() + timeout_secs
        self.forgotten = 0

    def tracks(self, task):
        return task in self.maps

    def xor(self, task, root, key):
        """Apply an emit or an ack; True when the tree rooted at ``(task, root)`` completed."""
        tracked = self.maps.get(task)
        if tracked is None:
            return False
        return tracked.xor(root, key)

    def fail(self, task, root):
        """A bolt failed a tuple of the tree: forget it; True if it was still pending."""
        tracked = self.maps.get(task)
        return tracked is not None and tracked.remove(root)

    def maybe_rotate(self):
        now = self._clock()
        if now < self._next_rotation:
            return
        self._next_rotation = now + self.interval
        for tracked in self.maps.values():
            self.forgotten += tracked.rotate()

    def pending(self):
        return sum([len(m) for m in self.maps.values()])

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
        cdef _Plan plan
        cdef _Slot* slot
        cdef RotatingXorMap spout_map = None
        cdef _Keys fresh
        cdef list out = []
        cdef list vals
        cdef ControlOut done
        _calls[_F_ROUTE_TRACKED] += 1
        _pure.check_tracked(batch)
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
                _pure.check_routing(batch, route_list)
                plan = _plan(batch, route_list, n, _F_ROUTE_TRACKED)
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
                    _head(stream, src32)
                    for j in range(m):
                        _blob(0x1a, <object>PyList_GET_ITEM(vals, slot.rows[j]))
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
                _pure.check_control(batch)  # raises its MalformedBatch
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
