"""The compiled XOR maps' fields and C methods, for the compiled acking
(``_acking.pyx``), which applies emits, acks and fails to a spout's map from C."""

from libc.stdint cimport uint64_t


cdef struct _Table:
    uint64_t* keys
    uint64_t* vals
    Py_ssize_t cap  # a power of 2, or 0 before the first entry
    Py_ssize_t n


cdef class RotatingXorMap:
    cdef _Table* _tables
    cdef Py_ssize_t _nb
    cdef Py_ssize_t _head  # the newest bucket's index in the ring

    cdef _Table* _bucket(self, Py_ssize_t k)
    cdef int _xor(self, uint64_t root, uint64_t key) except -1
    cdef int _start(self, uint64_t root, uint64_t key) except -1
    cdef int _remove(self, uint64_t root) except -1


cdef class XorManager:
    cdef public dict maps
    cdef public object interval
    cdef public object forgotten
    cdef object _clock
    cdef object _next_rotation
