# cython: language_level=3, boundscheck=False, wraparound=False
"""The component API's per-tuple path, compiled: the twin of ``engine.instance.api`` (read
its docstring for what each piece does). Every function here does what the twin does, in
the same order, with the same errors; only the Python frames are gone. The user's own
``next_tuple`` and ``process`` are the only Python code left on a tuple's way.

``path_counts()`` says, as ``_codec``'s does, how many calls of ``run_blobs`` decoded
every row here and how many handed some row to msgpack, the pure twin's decoder
(``reset_path_counts()`` starts over): one C increment per call."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.float cimport PyFloat_FromDouble
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_FromLong, PyLong_FromLongLong, PyLong_FromUnsignedLongLong
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_ITEM, PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from engine.common.codec._codec cimport StreamOut, _decimal
from engine.common.codec._wire cimport values_at

import sys as _sys
import time as _time

from compat.storm_api.component import not_a_tuple
from compat.storm_api.exceptions import StormWentAwayError
from compat.storm_api.hosting import handle_component_exception
from compat.storm_api.tuple import Tuple
from engine.common.codec.markers import RowNotPacked
from engine.instance.api import CollectorCore as _PureCore, _loads
from engine.common.codec.codec import values_of as _values_of

cdef extern from "Python.h":
    Py_ssize_t PyDict_GET_SIZE(object d)
    object PyType_GenericAlloc(PyTypeObject* t, Py_ssize_t n)
    bint PyType_IsSubtype(PyTypeObject* a, PyTypeObject* b)
    PyTypeObject PyTuple_Type
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)

cdef extern from "<time.h>" nogil:
    ctypedef int clockid_t
    cdef struct timespec:
        long tv_sec
        long tv_nsec
    int clock_gettime(clockid_t clk, timespec* tp)
    clockid_t CLOCK_MONOTONIC

include "../common/codec/_build_identity.pxi"

#: ControlBatch's ACK kind (tuple.proto), as the collector sends it
ACK = 1
_perf_counter = _time.perf_counter
_time_monotonic = _time.monotonic
#: where CPython's time.monotonic reads CLOCK_MONOTONIC itself, so can this module
cdef bint _c_clock = _sys.platform.startswith("linux")
cdef object _Tuple = Tuple
cdef object _ACK = ACK
#: the pure twin's emit, for a stream that is not this path's StreamOut
cdef object _pure_emit = _PureCore.emit
#: what a row decoder returns for a row it leaves to msgpack
cdef object _MISS = object()


# -- which calls ran here, and which were handed to the pure twin -----------------------
# Per public function: calls, and calls that handed some of their work (a row) to the
# pure twin's decoder.
cdef enum:
    _F_RUN_BLOBS
    _NFUNCS

_FUNCTIONS = ("CollectorCore.run_blobs",)
include "../common/codec/_path_counts.pxi"


# -- a row's values straight from its msgpack bytes -----------------------------------
cdef inline uint64_t _be(const unsigned char* p, int width):
    cdef uint64_t v = 0
    cdef int k
    for k in range(width):
        v = (v << 8) | p[k]
    return v


cdef object _scalar(const unsigned char* p, Py_ssize_t n, Py_ssize_t* at):
    """The scalar at ``p[at]`` as msgpack's unpacker (raw=False) gives it, ``at`` moved past
    it; ``_MISS`` for anything else (arrays, maps, extensions, a truncated value, text
    that is not UTF-8): the caller leaves the row to msgpack, for its value or its error."""
    cdef Py_ssize_t i = at[0]
    cdef unsigned char b
    cdef Py_ssize_t size = 0, head = 0
    cdef uint64_t u
    cdef uint32_t u32
    cdef float f
    cdef double d
    if i >= n:
        return _MISS
    b = p[i]
    if b <= 0x7f:
        at[0] = i + 1
        return PyLong_FromLong(b)
    if b >= 0xe0:
        at[0] = i + 1
        return PyLong_FromLong(<long>(<int8_t>b))
    if 0xa0 <= b <= 0xbf or 0xd9 <= b <= 0xdb or 0xc4 <= b <= 0xc6:
        if b <= 0xbf:
            head, size = 1, b & 0x1f
        else:
            head = 1 + (1 << ((b - 0xd9) if b >= 0xd9 else (b - 0xc4)))
            if i + head > n:
                return _MISS
            size = <Py_ssize_t>_be(p + i + 1, head - 1)
        if size < 0 or i + head + size > n:
            return _MISS
        at[0] = i + head + size
        if b >= 0xc4 and b <= 0xc6:
            return PyBytes_FromStringAndSize(<const char*>(p + i + head), size)
        try:
            return PyUnicode_DecodeUTF8(<const char*>(p + i + head), size, NULL)
        except UnicodeDecodeError:
            return _MISS
    if b == 0xc0:
        at[0] = i + 1
        return None
    if b == 0xc2 or b == 0xc3:
        at[0] = i + 1
        return b == 0xc3
    if 0xcc <= b <= 0xd3:  # uint8..uint64, int8..int64
        size = 1 << ((b - 0xcc) & 3)
        if i + 1 + size > n:
            return _MISS
        u = _be(p + i + 1, <int>size)
        at[0] = i + 1 + size
        if b <= 0xcf:
            return PyLong_FromUnsignedLongLong(u)
        if size == 1:
            return PyLong_FromLong(<long>(<int8_t>u))
        if size == 2:
            return PyLong_FromLong(<long>(<int16_t>u))
        if size == 4:
            return PyLong_FromLong(<long>(<int32_t>u))
        return PyLong_FromLongLong(<long long>(<int64_t>u))
    if b == 0xca:
        if i + 5 > n:
            return _MISS
        u32 = <uint32_t>_be(p + i + 1, 4)
        memcpy(&f, &u32, 4)
        at[0] = i + 5
        return PyFloat_FromDouble(<double>f)
    if b == 0xcb:
        if i + 9 > n:
            return _MISS
        u = _be(p + i + 1, 8)
        memcpy(&d, &u, 8)
        at[0] = i + 9
        return PyFloat_FromDouble(d)
    return _MISS


cdef object _fast_values(const unsigned char* p, Py_ssize_t n, object values_type,
                         Py_ssize_t width):
    """The values of one msgpack row (an array of scalars, the ``n`` bytes at ``p``) built
    straight into the stream's values type (a tuple subclass, or a plain tuple when None),
    as ``_loads`` and ``tuple.__new__`` would build them; ``_MISS`` for any row this does
    not decode."""
    cdef Py_ssize_t count, k, at
    cdef unsigned char b
    cdef object values, item
    if n < 1:
        return _MISS
    b = p[0]
    if 0x90 <= b <= 0x9f:
        count, at = b & 0x0f, 1
    elif b == 0xdc and n >= 3:
        count, at = <Py_ssize_t>_be(p + 1, 2), 3
    elif b == 0xdd and n >= 5:
        count, at = <Py_ssize_t>_be(p + 1, 4), 5
    else:
        return _MISS
    if count > n - at:
        return _MISS  # more values than bytes: truncated
    if values_type is None:
        values = PyTuple_New(count)
    elif count != width:
        return _MISS  # msgpack decodes it, and the usual check says what is wrong
    else:
        values = PyType_GenericAlloc(<PyTypeObject*>values_type, count)
    for k in range(count):
        item = _scalar(p, n, &at)
        if item is _MISS:
            return _MISS
        _set(values, k, item)
    if at != n:
        return _MISS  # bytes after the row: msgpack refuses it
    return values


cdef inline void _set(object tup, Py_ssize_t k, object item):
    Py_INCREF(item)  # PyTuple_SET_ITEM steals a reference
    PyTuple_SET_ITEM(tup, k, item)


cdef inline double _monotonic():
    cdef timespec ts
    if not _c_clock:
        return _time_monotonic()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <double>ts.tv_sec + <double>ts.tv_nsec * 1e-9


cdef class CollectorCore:
    """``api.CollectorCore``, compiled: an instance collector's once-per-tuple work."""

    cdef public object streams, _default, _open, _dumps, capture, stats
    cdef public object emitted_ids, inflight, received, _settled
    cdef public bint acking, burst_emitted
    cdef public Py_ssize_t emitted, batch_size, processed, ran, burst_before
    cdef public double process_secs
    #: the subclass keeps this class's ``ack`` (``run_tuples`` may call it from C)
    cdef bint _plain_ack

    def __init__(self):
        self.streams = {}
        self._default = None
        self._open = None
        self._dumps = None
        self.capture = None
        self.stats = None
        self.acking = False
        self.emitted = 0
        self.emitted_ids = []
        self.inflight = {}
        self.received = {}
        self._settled = []
        self.batch_size = 1
        self.process_secs = 0.0
        self.processed = 0
        self.ran = 0
        self.burst_emitted = False
        self.burst_before = 0
        self._plain_ack = getattr(type(self), "ack") is CollectorCore.ack

    # -- emits ---------------------------------------------------------------------------
    def emit(self, values, stream, anchors, direct_task, need_task_ids, tup_id):
        return self._emit(values, stream, anchors, direct_task, need_task_ids, tup_id)

    cdef object _emit(self, object values, object stream, object anchors, object direct_task,
                      object need_task_ids, object tup_id):
        cdef object found, payload, full
        cdef StreamOut out
        if stream is None or stream == "default":
            found = self._default
        else:
            found = self.streams.get(stream)
        if type(found) is not StreamOut:  # None (undeclared), or another path's stream:
            # the twin's steps, through Python attributes
            return _pure_emit(self, values, stream, anchors, direct_task, need_task_ids, tup_id)
        out = <StreamOut>found
        if (direct_task is not None or need_task_ids or out.direct
                or len(values) != out.nfields):
            return self._emit_checked(out, values, stream, direct_task, need_task_ids, tup_id,
                                      anchors)
        cdef bint acking = self.acking
        if out.leaf:
            if tup_id is not None:
                return self._emit_checked(out, values, stream, direct_task, need_task_ids,
                                          tup_id, anchors)
            if anchors and acking:
                if len(anchors) != 1 or anchors[0] not in self.inflight:
                    self._anchor_roots(anchors, out.name)
            try:
                payload = self._dumps(values)
            except Exception as exc:
                raise self._serialization_error(exc, out, values) from None
            self.emitted += 1
            if self.capture is not None:
                self.capture.record(out.name, values, payload)
            return None
        if out.slow or (tup_id is not None and not acking):
            return self._emit_checked(out, values, stream, direct_task, need_task_ids, tup_id,
                                      anchors)
        if out is not self._open:
            self._switch_to(out)
        try:
            full = out._add_row(values, tup_id, anchors if acking else None)
        except RowNotPacked as exc:
            raise self._serialization_error(exc.error, out, values) from None
        self.emitted += 1
        if full:
            self.flush_stream(out)
        return None

    def spout_emit(self, tup, tup_id=None, stream=None, direct_task=None, need_task_ids=False):
        """``api.CollectorCore.spout_emit``: ``Spout.emit``, then ``emit``."""
        if not isinstance(tup, (list, tuple)):
            raise not_a_tuple(tup)
        task_ids = self._emit(tup, stream, None, direct_task, need_task_ids, tup_id)
        if not need_task_ids:
            return None
        return [direct_task] if direct_task is not None else task_ids

    def bolt_emit_for(self, component):
        """``component.emit`` for a bolt whose class keeps ``Bolt.emit``."""
        return BoltEmit(self, component).emit

    # -- acks ----------------------------------------------------------------------------
    def ack(self, tup_id):
        self._ack(tup_id, True)

    cdef int _ack(self, object tup_id, bint count) except -1:
        cdef object entry, received
        if self.acking:
            entry = self.inflight.pop(tup_id, self)
            if entry is self:
                raise self._unknown_input(tup_id, "acked")
            if entry is not None:  # collector.UNTRACKED
                self._settled.append((_ACK, entry))
                if len(self._settled) >= self.batch_size:
                    self.flush()
        if count:
            self.stats.acked += 1
        if self.received:
            received = self.received.pop(tup_id, None)
            if received is not None:
                self.process_secs += _perf_counter() - received
                self.processed += 1
        return 0

    # -- a bolt's batch ------------------------------------------------------------------
    def run_tuples(self, component, list tuples, Py_ssize_t start):
        """``api.CollectorCore.run_tuples``."""
        cdef Py_ssize_t n = PyList_GET_SIZE(tuples)
        cdef Py_ssize_t i = start
        cdef Py_ssize_t acked = 0
        cdef bint track = self.acking
        cdef bint plain_ack = self._plain_ack
        cdef object tup, tup_id
        cdef object process = component.process
        self.ran = 0
        try:
            while i < n:
                tup = <object>PyList_GET_ITEM(tuples, i)
                i += 1
                # its id read as the tuple's item (an index into a tuple subclass would go
                # through a generic __getitem__ slot)
                tup_id = <object>PyTuple_GET_ITEM(tup, 0) if PyTuple_Check(tup) else tup[0]
                acked += self._run_one(component, process, tup, tup_id, track, plain_ack)
        finally:
            self.ran = i - start
            if acked:
                self.stats.acked += acked

    cdef int _run_one(self, object component, object process, object tup, object tup_id,
                      bint track, bint plain_ack) except -1:
        """``api.CollectorCore._run_one``: 1 when this class's ``ack`` acked it (the
        caller counts those), else 0."""
        cdef int acked = 0
        try:
            if track:
                component._current_tups = [tup]
            process(tup)
            if component.auto_ack:
                if plain_ack:
                    self._ack(tup_id, False)  # Bolt.ack(tup)
                    acked = 1
                else:
                    self.ack(tup_id)
            if track:
                component._current_tups = []
        except StormWentAwayError:
            raise
        except Exception as exc:
            if not track:
                component._current_tups = [tup]
            handle_component_exception(component, exc)
        return acked

    def run_blobs(self, component, blobs, long long first_id, source, stream, task,
                  values_type, Py_ssize_t start, ids=None, payload=None):
        """``api.CollectorCore.run_blobs``: the common rows decoded in C straight into
        their values type, every other row by msgpack. With ``payload``, the serialized
        ``TupleBatch`` that ``blobs`` were parsed from, the rows are read where they lie
        in it (no ``bytes`` object per row); ``blobs`` then serve only the rows msgpack
        decodes, and a payload that does not hold exactly those rows is not used."""
        cdef Py_ssize_t n = len(blobs)
        cdef bint given_ids = type(ids) is list and PyList_GET_SIZE(ids) >= n
        cdef Py_ssize_t* starts = NULL
        cdef const unsigned char* wire = NULL
        cdef Py_ssize_t i = start
        cdef Py_ssize_t acked = 0, width = -1
        cdef bint track = self.acking
        cdef bint plain_ack = self._plain_ack
        cdef bint direct
        cdef bint handed = False
        cdef object blob, row, values, tup, tup_id
        cdef object process = component.process
        _calls[_F_RUN_BLOBS] += 1
        if values_type is not None:
            width = len(values_type._fields)
        # values are built in place only where tuple.__new__ would build exactly that
        direct = values_type is None or (isinstance(values_type, type) and PyType_IsSubtype(
            <PyTypeObject*>values_type, &PyTuple_Type))
        self.ran = 0
        if direct and type(payload) is bytes and n > start:
            starts = <Py_ssize_t*>PyMem_Malloc(2 * n * sizeof(Py_ssize_t))
            if starts == NULL:
                raise MemoryError()
            if values_at(<const uint8_t*>PyBytes_AS_STRING(payload), PyBytes_GET_SIZE(payload),
                         n, starts, starts + n):
                wire = <const unsigned char*>PyBytes_AS_STRING(payload)
        try:
            while i < n:
                i += 1
                if wire != NULL:
                    values = _fast_values(wire + starts[i - 1], starts[n + i - 1], values_type,
                                          width)
                else:
                    blob = blobs[i - 1]
                    values = (_fast_values(<const unsigned char*>PyBytes_AS_STRING(blob),
                                           PyBytes_GET_SIZE(blob), values_type, width)
                              if direct and type(blob) is bytes else _MISS)
                if values is _MISS:
                    if not handed:
                        handed = True
                        _handed[_F_RUN_BLOBS] += 1
                    try:
                        values = _values_of(_loads(blobs[i - 1]), values_type, width, source,
                                            stream)
                    except Exception as exc:
                        return exc
                if given_ids:
                    tup_id = <object>PyList_GET_ITEM(ids, i - 1)
                elif ids is not None:
                    tup_id = ids[i - 1]
                else:
                    tup_id = _decimal(first_id + i - 1)
                tup = PyType_GenericAlloc(<PyTypeObject*>_Tuple, 5)
                _set(tup, 0, tup_id)
                _set(tup, 1, source)
                _set(tup, 2, stream)
                _set(tup, 3, task)
                _set(tup, 4, values)
                acked += self._run_one(component, process, tup, tup_id, track, plain_ack)
            return None
        finally:
            PyMem_Free(starts)
            self.ran = i - start
            if acked:
                self.stats.acked += acked

    # -- a spout's burst -----------------------------------------------------------------
    def burst(self, next_tuple, double burst_end, pending, Py_ssize_t max_pending):
        """``api.CollectorCore.burst``."""
        cdef Py_ssize_t before
        self.burst_emitted = False
        while True:
            before = self.emitted
            self.burst_before = before
            next_tuple()
            if self.emitted_ids:
                return 1
            if self.emitted == before:
                return 0
            self.burst_emitted = True
            if _monotonic() >= burst_end or (max_pending >= 0 and len(pending) >= max_pending):
                return 0


cdef class BoltEmit:
    """``api.BoltEmit``, compiled: ``Bolt.emit`` for one bolt, then its collector's
    ``emit``, in one call."""

    cdef readonly CollectorCore core
    cdef readonly object component
    cdef readonly bint anchor_ids

    def __init__(self, CollectorCore core, component):
        self.core = core
        self.component = component
        self.anchor_ids = component._anchor_ids

    def emit(self, tup, stream=None, anchors=None, direct_task=None, need_task_ids=False):
        cdef object anchor, component, a
        if not isinstance(tup, (list, tuple)):
            raise not_a_tuple(tup)
        if self.anchor_ids:
            component = self.component
            if anchors is None:
                anchors = component._current_tups if component.auto_anchor else []
            if len(anchors) == 1:
                anchor = anchors[0]
                anchors = [anchor.id if isinstance(anchor, _Tuple) else anchor]
            else:
                anchors = [a.id if isinstance(a, _Tuple) else a for a in anchors]
        else:
            anchors = None
        task_ids = self.core._emit(tup, stream, anchors, direct_task, need_task_ids, None)
        if not need_task_ids:
            return None
        return [direct_task] if direct_task is not None else task_ids
