# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The tuple path, compiled: the twin of ``codec.py``, which it must match byte for byte
and error for error (tests/engine/codec checks it on random batches).

How it stays identical: the per-row work is done here in C for the exact types msgpack
and protobuf accept without question (None, bool, int, float, str, bytes, list, tuple,
dict; ints that fit 64 bits; str that encodes to UTF-8; task ids that fit int32). For
anything else (subclasses, bytearray, ext types, out-of-range numbers, surrogates, very
deep nesting, a wrong argument type) the call is handed whole to the pure twin, which
gives the result or raises the error the engine always gave. The one error written here
(a row with the wrong number of values) is the pure twin's, word for word.

``path_counts()`` says, per public function, how many calls ran here and how many were
handed to the pure twin (``reset_path_counts()`` starts over): one C increment per call.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_SET_ITEM
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

from engine.common.codec._scratch cimport (Scratch, put_be, put_byte, put_le, put_raw,
                                       put_varint, release, take, varint_size)

import zlib

from engine.common.codec import codec as _pure
from engine.common.codec.markers import MalformedBatch, RowNotPacked, Undecodable

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object o, Py_ssize_t* size) except NULL
    int PyDict_Next(object d, Py_ssize_t* pos, PyObject** key, PyObject** value)
    Py_ssize_t PyDict_GET_SIZE(object d)
    long long PyLong_AsLongLongAndOverflow(object o, int* overflow) except? -1
    unsigned long long PyLong_AsUnsignedLongLong(object o) except? -1
    object PyUnicode_DecodeASCII(const char* s, Py_ssize_t size, const char* errors)
    object PyList_AsTuple(object o)
    object PyList_New(Py_ssize_t n)
    void PyList_SET_ITEM(object o, Py_ssize_t i, object v)
    object PyType_GenericAlloc(PyTypeObject* t, Py_ssize_t n)
    void PyErr_Clear()
    bint PyType_IsSubtype(PyTypeObject* a, PyTypeObject* b)
    PyTypeObject PyTuple_Type

include "_build_identity.pxi"

# -- the output buffer (engine/common/codec/_scratch.pxd), reused from call to call ------
cdef enum:
    #: kept between calls up to this size; a larger one (a huge value) is given back
    _KEEP = 1 << 20
    #: nesting deeper than this goes to msgpack itself (its own limit is 511)
    _MAX_DEPTH = 500
    #: keys longer than this are hashed by zlib (faster on long data than the table here)
    _ZLIB_FROM = 512

cdef Scratch _out
_out.initial = 4096
_out.keep = _KEEP

# -- which calls ran here, and which were handed to the pure twin -----------------------
# Per public function: calls, and calls that handed (some of) their work to the pure
# twin; ``_handoffs`` counts every hand-off, so a call that nests others (``add_row``,
# ``append_key_hashes``) sees whether any of them handed theirs over.
cdef enum:
    _F_PACK_ROW
    _F_KEY_HASH
    _F_PACK_ROW_HASH
    _F_APPEND_KEY_HASHES
    _F_ENCODE_BATCH
    _F_MAKE_TUPLES
    _F_ADD_ROW
    _F_SETTLE
    _F_EXPIRE
    _F_ENCODE_CONTROL
    _NFUNCS

_FUNCTIONS = ("pack_row", "key_hash", "pack_row_hash", "append_key_hashes", "encode_batch",
              "make_tuples", "StreamOut.add_row", "PendingTable.settle",
              "PendingTable.expire", "encode_control")
include "_path_counts.pxi"

cdef unsigned long long _handoffs = 0

cdef inline void _to_twin(int f) noexcept:
    """Call ``f`` hands its work to the pure twin."""
    global _handoffs
    _handed[f] += 1
    _handoffs += 1

include "_encode.pxi"

# -- decoded rows into Tuples -----------------------------------------------------------
cdef inline object _new_tuple(PyTypeObject* t, Py_ssize_t n):
    """An instance of the tuple subclass ``t`` with ``n`` unset items, as
    ``tuple.__new__(t, ...)`` allocates it (namedtuples have no instance dict)."""
    return PyType_GenericAlloc(t, n)

cdef inline void _set(object tup, Py_ssize_t i, object item):
    Py_INCREF(item)  # PyTuple_SET_ITEM steals a reference
    PyTuple_SET_ITEM(tup, i, item)

cdef object _values_of(object row, object values_type, Py_ssize_t width,
                       bint direct, object component, object stream):
    """The values of one row, as ``codec.make_tuples``; raises what it raises."""
    cdef Py_ssize_t i
    cdef object values, item
    if values_type is None:
        if type(row) is list:
            return PyList_AsTuple(row)
        return tuple(row)
    if type(row) is list and PyList_GET_SIZE(row) == width and direct:
        values = _new_tuple(<PyTypeObject*>values_type, width)
        for i in range(width):
            _set(values, i, <object>PyList_GET_ITEM(row, i))
        return values
    if len(row) != width:
        raise ValueError(f"{len(row)} value(s) for the {width} field(s) "
                         f"{list(values_type._fields)} of {component}/{stream}")
    return tuple.__new__(values_type, row)

cdef object _decimal(long long n):
    """``str(n)``, without the format parsing of PyUnicode_FromFormat."""
    cdef char digits[24]
    cdef int pos = 24
    cdef bint negative = n < 0
    cdef unsigned long long u = <unsigned long long>n
    if negative:
        u = 0ULL - u  # the magnitude, also of the most negative number
    while True:
        pos -= 1
        digits[pos] = <char>(48 + u % 10)
        u //= 10
        if u == 0:
            break
    if negative:
        pos -= 1
        digits[pos] = b'-'
    return PyUnicode_DecodeASCII(digits + pos, 24 - pos, NULL)

def make_tuples(long long first_id, rows, component, stream, task, values_type,
                tuple_type):
    """``(tuples, clean)``: the rows of a decoded batch as the ``Tuple`` objects a bolt
    receives, ids ``str(first_id + i)``; rows that are ``Undecodable`` or do not fit the
    stream become ``Undecodable`` with the error the pure twin gives."""
    cdef list out = []
    cdef bint clean = True
    cdef Py_ssize_t width = -1, i = 0
    cdef object row, values, tup, tup_id
    cdef bint direct, direct_outer
    _calls[_F_MAKE_TUPLES] += 1
    if values_type is not None:
        width = len(values_type._fields)
    # the items of a tuple subclass are set in place only where tuple.__new__ would
    # build exactly that (a type that is not a tuple subclass gets tuple.__new__'s error)
    direct = (values_type is not None and isinstance(values_type, type)
              and PyType_IsSubtype(<PyTypeObject*>values_type, &PyTuple_Type))
    direct_outer = (isinstance(tuple_type, type)
                    and PyType_IsSubtype(<PyTypeObject*>tuple_type, &PyTuple_Type))
    if not direct_outer:
        _to_twin(_F_MAKE_TUPLES)
        return _pure.make_tuples(first_id, rows, component, stream, task, values_type,
                                 tuple_type)
    for row in rows:
        if type(row) is Undecodable:
            out.append(row)
            clean = False
            i += 1
            continue
        try:
            values = _values_of(row, values_type, width, direct, component, stream)
        except Exception as exc:
            out.append(Undecodable(exc))
            clean = False
            i += 1
            continue
        tup_id = _decimal(first_id + i)
        tup = _new_tuple(<PyTypeObject*>tuple_type, 5)
        _set(tup, 0, tup_id)
        _set(tup, 1, component)
        _set(tup, 2, stream)
        _set(tup, 3, task)
        _set(tup, 4, values)
        out.append(tup)
        i += 1
    return out, clean

# -- a stream's pending batch: the routed emit's row --------------------------------------
cdef extern from "<time.h>" nogil:
    ctypedef int clockid_t
    cdef struct timespec:
        long tv_sec
        long tv_nsec
    int clock_gettime(clockid_t clk, timespec* tp)
    clockid_t CLOCK_MONOTONIC

import sys as _sys
import time as _time
from random import getrandbits as _getrandbits

cdef inline double _monotonic():
    """``time.monotonic()``: CPython reads the same clock (CLOCK_MONOTONIC) on Linux."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <double>ts.tv_sec + <double>ts.tv_nsec * 1e-9

_time_monotonic = _time.monotonic
#: where CPython's time.monotonic reads CLOCK_MONOTONIC itself, so can this module
cdef bint _c_clock = _sys.platform.startswith("linux")


cdef class StreamOut:
    """One declared output stream of an instance's task and the rows waiting to be sent
    (the twin of ``codec.StreamOut``: the same attributes, and ``add_packed`` in C)."""

    # its attributes and ``_add_row`` are declared in _codec.pxd, where the component
    # API's path (_api.pyx) reads them from C

    def __init__(self, name, fields, direct, key_indices, groupings, leaf, captured=None):
        self.name = name
        self.fields = fields
        self.nfields = len(fields)
        self.direct = direct
        self.key_indices = key_indices
        self.single_key = (key_indices[0][0] if len(key_indices) == 1
                           and len(key_indices[0]) == 1 else None)
        self.groupings = groupings
        self.leaf = leaf
        self.captured = leaf if captured is None else captured
        self.values = []
        self.nbytes = 0
        self.hashes = []
        self.dest_counts = []
        self.dest_tasks = []
        self.root_counts = []
        self.root_tasks = []
        self.root_keys = []
        self.slow = self.captured or direct
        self.bind(0, {}, None, 1024, 1 << 20, pack_row, True)

    @classmethod
    def of(cls, plan, component, stream, groupings, capture_all=False):
        """The output stream ``stream`` of ``component`` in logical plan ``plan``: its key
        columns, and whether it is a leaf (no consumers) and captured."""
        key_sets = plan.key_field_sets(component.name, stream.name)
        key_indices = [tuple(list(stream.fields).index(f) for f in fs) for fs in key_sets]
        leaf = not plan.consumers(component.name, stream.name)
        return cls(stream.name, tuple(stream.fields), stream.direct, key_indices, groupings,
                   leaf=leaf, captured=leaf or capture_all)

    def bind(self, task, pending_roots, anchor_roots, Py_ssize_t batch_size,
             Py_ssize_t batch_bytes, dumps, msgpack_rows):
        """What ``add_row`` needs of the collector that owns this stream."""
        self._dumps = dumps
        self._msgpack = msgpack_rows
        self._task = task
        self._pending = pending_roots
        self._anchor_roots = anchor_roots
        self._batch_size = batch_size
        self._batch_bytes = batch_bytes

    def add_row(self, values, tup_id, anchors):
        """``codec.StreamOut.add_row``: the same bytes and columns, the same pending table
        entry, the same draws of ``random.getrandbits``, the same errors."""
        cdef unsigned long long mark = _handoffs
        _calls[_F_ADD_ROW] += 1
        try:
            return self._add_row(values, tup_id, anchors)
        finally:
            if _handoffs != mark:  # its row, or a key hash, went to the pure twin
                _handed[_F_ADD_ROW] += 1

    cdef object _add_row(self, values, tup_id, anchors):
        global _handoffs
        cdef list rows = self.values
        cdef list counts = self.root_counts
        cdef Py_ssize_t row = PyList_GET_SIZE(rows)
        cdef object root, roots, payload, key = None
        cdef tuple packed
        single = self.single_key
        try:
            if single is not None and self._msgpack:
                packed = _pack_row_hash(values, single)
                if packed is None:
                    _handoffs += 1
                    packed = _pure.pack_row_hash(values, <Py_ssize_t>single)
                payload = <object>PyTuple_GET_ITEM(packed, 0)
                key = <object>PyTuple_GET_ITEM(packed, 1)
            else:
                payload = self._dumps(values)
        except Exception as exc:
            raise RowNotPacked(exc) from exc
        if tup_id is not None:  # a spout's tracked tuple: the root of a new tree
            root = _getrandbits(64) or 1
            self._pending[root] = (tup_id, _monotonic() if _c_clock else _time_monotonic())
            if PyList_GET_SIZE(counts) < row:
                counts.extend([0] * (row - PyList_GET_SIZE(counts)))
            counts.append(1)
            self.root_tasks.append(self._task)
            self.root_keys.append(root)
        elif anchors:
            roots = self._anchor_roots(anchors, self.name)
            if PyList_GET_SIZE(counts) < row:
                counts.extend([0] * (row - PyList_GET_SIZE(counts)))
            counts.append(len(roots))
            for task, root_key in roots:
                self.root_tasks.append(task)
                self.root_keys.append(root_key)
        elif PyList_GET_SIZE(counts):
            counts.append(0)
        rows.append(payload)
        self.nbytes += PyBytes_GET_SIZE(payload) if type(payload) is bytes else len(payload)
        if key is not None:
            self.hashes.append(key)
        elif single is not None:
            self.hashes.append(key_hash(values[single]))
        elif self.key_indices:
            append_key_hashes(self.hashes, values, self.key_indices)
        return PyList_GET_SIZE(rows) >= self._batch_size or self.nbytes >= self._batch_bytes


# -- a spout's pending trees ------------------------------------------------------------
#: ControlBatch kinds (tuple.proto's ControlKind), as in the pure twin
cdef enum:
    _ACK = 1
    _FAIL = 2
ACK = _ACK
FAIL = _FAIL


cdef class PendingTable:
    """A spout task's tuple trees awaiting completion (the twin of ``codec.PendingTable``:
    the same table, the same results, the same errors; the loops over an ack batch and
    over the oldest entries run here in C)."""

    cdef public dict entries

    def __init__(self):
        self.entries = {}

    def __len__(self):
        return PyDict_GET_SIZE(self.entries)

    def add(self, root, tup_id, double at):
        self.entries[root] = (tup_id, at)

    def settle(self, kinds, roots, double now, list latencies, Py_ssize_t room):
        """``codec.PendingTable.settle``."""
        _calls[_F_SETTLE] += 1
        cdef list k = list(kinds)
        cdef list r = list(roots)
        cdef Py_ssize_t n = PyList_GET_SIZE(k), i
        cdef long long kind
        cdef int overflow
        cdef dict entries = self.entries
        cdef object entry, item
        cdef list out = []
        if n != PyList_GET_SIZE(r):
            raise MalformedBatch(f"an ack batch with {n} kind(s) for "
                                 f"{PyList_GET_SIZE(r)} root(s)")
        for i in range(n):
            item = <object>PyList_GET_ITEM(k, i)
            if type(item) is not int:
                raise MalformedBatch(f"an ack batch with kind {item!r} (not ACK or FAIL)")
            kind = PyLong_AsLongLongAndOverflow(item, &overflow)
            if overflow or (kind != _ACK and kind != _FAIL):
                raise MalformedBatch(f"an ack batch with kind {item!r} (not ACK or FAIL)")
        for i in range(n):
            entry = entries.pop(<object>PyList_GET_ITEM(r, i), None)
            if entry is None:
                continue
            item = <object>PyList_GET_ITEM(k, i)
            if room > 0 and PyLong_AsLongLongAndOverflow(item, &overflow) == _ACK:
                latencies.append(now - <double>(<tuple>entry)[1])
                room -= 1
            out.append((item, (<tuple>entry)[0]))
        return out

    def expire(self, double deadline):
        """``codec.PendingTable.expire``."""
        _calls[_F_EXPIRE] += 1
        cdef dict entries = self.entries
        cdef Py_ssize_t pos = 0
        cdef PyObject* key
        cdef PyObject* value
        cdef list old = []
        while PyDict_Next(entries, &pos, &key, &value):
            if <double>(<tuple><object>value)[1] > deadline:
                break
            old.append(<object>key)
        return [(<tuple>entries.pop(root))[0] for root in old]
