# cython: language_level=3
"""Reading protobuf's wire format in C, shared as inline code by the compiled modules
that take a ``TupleBatch`` apart without a Python object per row: the Stream Manager's
split (``engine.stmgr._routing.split_rebatched``) and a bolt's rows
(``engine.instance._api.run_blobs``). Each caller has had protobuf parse the same payload, and checks what it finds against that."""

from libc.stdint cimport uint8_t, uint64_t


cdef inline bint read_varint(const uint8_t* p, Py_ssize_t n, Py_ssize_t* at, uint64_t* out) noexcept:
    """The varint at ``at[0]`` into ``out[0]``, ``at[0]`` moved past it; False when it
    runs past ``n`` or past 64 bits."""
    cdef uint64_t v = 0
    cdef int shift = 0
    cdef Py_ssize_t i = at[0]
    cdef uint8_t b
    while i < n and shift < 64:
        b = p[i]
        i += 1
        v |= (<uint64_t>(b & 0x7f)) << shift
        if b < 0x80:
            at[0] = i
            out[0] = v
            return True
        shift += 7
    return False


cdef inline bint values_at(const uint8_t* p, Py_ssize_t n, Py_ssize_t rows, Py_ssize_t* starts,
                           Py_ssize_t* sizes) noexcept:
    """Where each of a TupleBatch's ``rows`` values (field 3) starts in the payload, and
    its length, every other field skipped whatever it holds; False unless the payload
    reads to its end and holds exactly ``rows`` values."""
    cdef Py_ssize_t at = 0, found = 0
    cdef uint64_t tag, length
    cdef int wire
    while at < n:
        if not read_varint(p, n, &at, &tag):
            return False
        wire = <int>(tag & 7)
        if wire == 0:
            if not read_varint(p, n, &at, &length):
                return False
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        elif wire == 2:
            if not read_varint(p, n, &at, &length) or length > <uint64_t>(n - at):
                return False
            if (tag >> 3) == 3:
                if found == rows:
                    return False
                starts[found] = at
                sizes[found] = <Py_ssize_t>length
                found += 1
            at += <Py_ssize_t>length
        else:
            return False
        if at > n:
            return False
    return found == rows
