"""What other compiled modules of the tuple path use of ``_codec`` from C: a stream's
pending batch, whose fields and ``_add_row`` the component API's path (``_api.pyx``)
reads and calls on every emit without going through Python attribute lookups, and the
decimal text of a tuple id."""


cdef object _decimal(long long n)


cdef class StreamOut:
    cdef public object name, fields, key_indices, single_key, groupings
    cdef public Py_ssize_t nfields
    cdef public bint direct, leaf, captured, slow
    cdef public list values, hashes, dest_counts, dest_tasks, root_counts, root_tasks, root_keys
    cdef public Py_ssize_t nbytes
    cdef object _task, _anchor_roots, _pending, _dumps
    cdef bint _msgpack
    cdef Py_ssize_t _batch_size, _batch_bytes

    cdef object _add_row(self, values, tup_id, anchors)
