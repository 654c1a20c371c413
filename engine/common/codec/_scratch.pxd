# cython: language_level=3
"""The output buffer the compiled modules write their bytes into, shared as inline C.

Each module keeps one ``Scratch`` of its own, reused from call to call: the GIL is held
while it is filled and nothing that fills it calls back into Python, so no call can
interleave with another. It keeps its memory between calls up to ``keep`` bytes (a huge
value's buffer is given back by ``release``). The writers are inline, so a row costs what
the code each module kept for itself cost; growing the buffer is their one rare branch.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcpy


cdef struct Scratch:
    char* buf
    Py_ssize_t len
    Py_ssize_t cap
    #: the first allocation, in bytes (each growth doubles it, or more when needed)
    Py_ssize_t initial
    #: a buffer grown past this is freed by ``release`` instead of kept
    Py_ssize_t keep


cdef inline int grow(Scratch* s, Py_ssize_t need) except -1:
    """Make room for ``need`` bytes in all (the rare path of ``reserve``)."""
    cdef Py_ssize_t cap = s.cap * 2 if s.cap else s.initial
    cdef char* grown
    if cap < need:
        cap = need
    grown = <char*>PyMem_Realloc(s.buf, cap)
    if grown == NULL:
        raise MemoryError()
    s.buf = grown
    s.cap = cap
    return 0


cdef inline int reserve(Scratch* s, Py_ssize_t n) except -1:
    """Room for ``n`` more bytes after ``s.len``."""
    if s.len + n <= s.cap:
        return 0
    return grow(s, s.len + n)


cdef inline void release(Scratch* s) noexcept:
    """Start empty, giving back a buffer a huge value grew."""
    s.len = 0
    if s.cap > s.keep:
        PyMem_Free(s.buf)
        s.buf = NULL
        s.cap = 0


cdef inline int put_byte(Scratch* s, uint8_t b) except -1:
    reserve(s, 1)
    s.buf[s.len] = <char>b
    s.len += 1
    return 0


cdef inline int put_raw(Scratch* s, const char* data, Py_ssize_t n) except -1:
    reserve(s, n)
    memcpy(s.buf + s.len, data, n)
    s.len += n
    return 0


cdef inline int put_varint(Scratch* s, uint64_t v) except -1:
    """``v`` as a protobuf varint (7 bits a byte, low first)."""
    reserve(s, 10)
    while v >= 0x80:
        s.buf[s.len] = <char>((v & 0x7f) | 0x80)
        s.len += 1
        v >>= 7
    s.buf[s.len] = <char>v
    s.len += 1
    return 0


cdef inline int varint_size(uint64_t v) noexcept:
    cdef int n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n


cdef inline int put_le(Scratch* s, uint64_t v, int size) except -1:
    """``v`` little-endian in ``size`` bytes (protobuf's fixed32 and fixed64)."""
    cdef int i
    reserve(s, size)
    for i in range(size):
        s.buf[s.len + i] = <char>(v & 0xff)
        v >>= 8
    s.len += size
    return 0


cdef inline int put_be(Scratch* s, uint8_t head, uint64_t v, int size) except -1:
    """``head`` then ``v`` big-endian in ``size`` bytes (msgpack's numbers and lengths)."""
    cdef int i
    reserve(s, 1 + size)
    s.buf[s.len] = <char>head
    for i in range(size):
        s.buf[s.len + size - i] = <char>(v & 0xff)
        v >>= 8
    s.len += 1 + size
    return 0


cdef inline bytes take(Scratch* s):
    """What was written, as a new bytes object (the buffer stays for the next call)."""
    return PyBytes_FromStringAndSize(s.buf, s.len)
