# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The Stream Manager's XOR tracking of tuple trees, compiled: the twin of ``xor.py``,
which it must match result for result (tests/engine/codec checks both on random
sequences of emits, acks and fails). The buckets are C hash tables in a ring, so an emit
or an ack allocates nothing; the compiled acking (``_acking.pyx``) calls the maps' C
methods (declared in ``_xor.pxd``) directly.

``path_counts()`` says, per public function, how many calls ran here (nothing is handed
to the pure twin; ``reset_path_counts()`` starts over).
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport uint64_t

import time

include "../common/codec/_build_identity.pxi"

# -- which calls ran here ----------------------------------------------------------------
cdef enum:
    _F_XOR
    _F_START_MANY
    _F_REMOVE
    _NFUNCS

_FUNCTIONS = ("RotatingXorMap.xor", "RotatingXorMap.start_many", "RotatingXorMap.remove")
include "../common/codec/_path_counts.pxi"

# -- XOR tracking ----------------------------------------------------------------------
# A table of root key -> running XOR, open addressing with linear probing. Stored values
# are never 0 (an entry is removed when its value returns to 0), so a slot whose value is
# 0 is empty and every key, 0 included, can be stored.
# (_Table: _xor.pxd)

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

    cdef _Table* _bucket(self, Py_ssize_t k):
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
