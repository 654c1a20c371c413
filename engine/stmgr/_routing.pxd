"""What the compiled acking (``_acking.pyx``) uses of the compiled routing from C: a
batch's rows planned per destination task (``_Plan``, ``_plan``), a repeated integer
column as a C array (``_u64``), and the two writers of a ``TupleBatch``'s first fields,
inline here so each module writes into its own output buffer without a call."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from engine.common.codec._scratch cimport Scratch, put_byte, put_raw, put_varint


cdef struct _Slot:
    Py_ssize_t* rows
    Py_ssize_t n
    Py_ssize_t cap
    bint unsorted


cdef class _Plan:
    cdef list tasks
    cdef dict slot_of
    cdef _Slot* slots
    cdef Py_ssize_t nslots, maxslots

    cdef Py_ssize_t slot(self, object task) except -1
    cdef int add(self, Py_ssize_t s, Py_ssize_t row) except -1
    cdef void finish(self)
    cdef list rows_list(self, Py_ssize_t s)


cdef _Plan _plan(object batch, list routes, Py_ssize_t n, bint* handed)
cdef uint64_t* _u64(object column, Py_ssize_t* n) except? NULL


cdef inline int _blob(Scratch* out, uint8_t tag, object data) except -1:
    """A length-delimited field from a bytes object."""
    put_byte(out, tag)
    put_varint(out, <uint64_t>PyBytes_GET_SIZE(data))
    return put_raw(out, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


cdef inline int _head(Scratch* out, object stream, int32_t src) except -1:
    """A TupleBatch's fields 1 (the stream, as serialized) and 2 (the source task)."""
    _blob(out, 0x0a, stream)
    put_byte(out, 0x10)
    return put_varint(out, <uint64_t><int64_t>src)
