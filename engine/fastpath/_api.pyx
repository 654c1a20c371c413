# cython: language_level=3, boundscheck=False, wraparound=False
"""The component API's per-tuple path, compiled: the twin of ``engine.fastpath.api`` (read
its docstring for what each piece does). Every function here does what the twin does, in
the same order, with the same errors; only the Python frames are gone. The user's own
``next_tuple`` and ``process`` are the only Python code left on a tuple's way."""

from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_ITEM
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject

import sys as _sys
import time as _time

from compat.storm_api.component import not_a_tuple
from compat.storm_api.exceptions import StormWentAwayError
from compat.storm_api.hosting import handle_component_exception
from compat.storm_api.tuple import Tuple
from engine.fastpath.markers import RowNotPacked

cdef extern from *:
    """
    #ifndef HERON_SOURCES_HASH
    #define HERON_SOURCES_HASH ""
    #endif
    """
    const char* HERON_SOURCES_HASH

cdef extern from "Python.h":
    Py_ssize_t PyDict_GET_SIZE(object d)

cdef extern from "<time.h>" nogil:
    ctypedef int clockid_t
    cdef struct timespec:
        long tv_sec
        long tv_nsec
    int clock_gettime(clockid_t clk, timespec* tp)
    clockid_t CLOCK_MONOTONIC

#: True here, False in the pure twin: which one a caller holds.
COMPILED = True
#: The hash of the sources this module was built from (setup.py passes it in).
SOURCES_HASH = HERON_SOURCES_HASH.decode("ascii")

#: ControlBatch's ACK kind (tuple.proto), as the collector sends it
ACK = 1
_perf_counter = _time.perf_counter
_time_monotonic = _time.monotonic
#: where CPython's time.monotonic reads CLOCK_MONOTONIC itself, so can this module
cdef bint _c_clock = _sys.platform.startswith("linux")
cdef object _Tuple = Tuple
cdef object _ACK = ACK


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
        cdef object out, payload, full
        if stream is None or stream == "default":
            out = self._default
        else:
            out = self.streams.get(stream)
        if (out is None or direct_task is not None or need_task_ids or out.direct
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
            full = out.add_row(values, tup_id, anchors if acking else None)
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
                try:
                    if track:
                        component._current_tups = [tup]
                    process(tup)
                    if component.auto_ack:
                        # Bolt.ack(tup): its id, read as the tuple's item (an index into
                        # a tuple subclass would go through a generic __getitem__ slot)
                        tup_id = (<object>PyTuple_GET_ITEM(tup, 0) if PyTuple_Check(tup)
                                  else tup[0])
                        if plain_ack:
                            self._ack(tup_id, False)
                            acked += 1
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
        finally:
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
