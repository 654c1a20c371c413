# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The Stream Manager's routing, compiled: the twin of ``routing.py``, which it must match
result for result, byte for byte and error for error (tests/engine/codec checks it on
random batches).

How it stays identical: the rows of a batch are split and encoded here in C, but every
decision that involves Python state is made with the same Python objects in the same
order as the pure twin: the shuffle start comes from the route's own ``random.Random``,
and a batch whose columns disagree is refused by the pure twin's own checks (so the
``MalformedBatch`` message is its, word for word) before anything changes. Routes that
are not plain (no tasks, key groups) and batches with explicit destinations are split by
the pure twin's ``split_indices`` itself. The compiled acking (``_acking.pyx``) plans a
tracked batch's rows with ``_plan`` (declared in ``_routing.pxd``).

``path_counts()`` says, per public function, how many calls ran here and how many were
handed (in part) to the pure twin's split (``reset_path_counts()`` starts over); the pure
twin's checks, which only name a malformed batch's fault, are not a hand-off.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_AsUnsignedLongLong
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport qsort

from engine.common.codec._scratch cimport Scratch, put_byte, put_raw, put_varint, release, take
from engine.common.codec._wire cimport read_varint

from engine.stmgr import routing as _pure

include "../common/codec/_build_identity.pxi"

SHUFFLE, FIELDS, ALL, LOWEST, DIRECT = _pure.SHUFFLE, _pure.FIELDS, _pure.ALL, _pure.LOWEST, _pure.DIRECT
check_routing = _pure.check_routing
check_tracked = _pure.check_tracked
check_control = _pure.check_control

# -- the output buffer (engine/common/codec/_scratch.pxd), reused from call to call ---------
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
    _F_SPLIT_REBATCHED
    _NFUNCS

_FUNCTIONS = ("split_indices", "split_batch", "rebatch", "split_rebatched")
include "../common/codec/_path_counts.pxi"

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
# (_Slot: _routing.pxd)
cdef int _cmp(const void* a, const void* b) noexcept nogil:
    cdef Py_ssize_t x = (<Py_ssize_t*>a)[0], y = (<Py_ssize_t*>b)[0]
    return (x > y) - (x < y)

cdef class _Plan:
    """The destination tasks of a batch (first-seen order, as the pure twin's dict) and
    each one's row indices (its fields: _routing.pxd)."""

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

cdef _Plan _plan(object batch, list routes, Py_ssize_t n, bint* handed):
    """``split_indices`` as a plan (the caller checked the batch and the routes);
    ``handed[0]`` is set when the pure twin's split made it."""
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
        handed[0] = True
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
    cdef bint handed = False
    _calls[_F_SPLIT_INDICES] += 1
    if not n:
        return []
    if not _plain(route_list):
        _handed[_F_SPLIT_INDICES] += 1
        return _pure.split_indices(batch, route_list)
    _pure.check_routing(batch, route_list)
    plan = _plan(batch, route_list, n, &handed)
    if handed:
        _handed[_F_SPLIT_INDICES] += 1
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
        _head(&_out, batch.stream.SerializeToString(), src)
        for v in vals:
            _blob(&_out, 0x1a, v)
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
        _head(&_out, stream, src)
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
