# The encoding half of ``_codec.pyx``, included into it (one extension module, its
# counters and output buffer shared): msgpack rows, the key hash, a TupleBatch, a bolt's
# acks and fails as one ControlBatch. The decoding half, a stream's pending batch and a
# spout's pending trees stay in ``_codec.pyx``.

# -- msgpack, as msgpack.Packer(use_bin_type=True) writes it ------------------------------
# Returns 0 when packed, 1 when the value must go to msgpack itself (nothing is raised
# then; the caller starts over with the pure twin), -1 with an exception (memory).
cdef int _pack(object o, int depth) except -1:
    cdef type t = type(o)
    cdef long long ll
    cdef unsigned long long ull
    cdef int overflow = 0
    cdef Py_ssize_t n, i, pos
    cdef const char* s
    cdef PyObject* k
    cdef PyObject* v
    cdef double d
    cdef uint64_t bits
    if depth > _MAX_DEPTH:
        return 1
    if o is None:
        return put_byte(&_out, 0xc0)
    if t is bool:
        return put_byte(&_out, 0xc3 if o is True else 0xc2)
    if t is int:
        ll = PyLong_AsLongLongAndOverflow(o, &overflow)
        if overflow == 0:
            if ll < -(1 << 5):
                if ll < -(1 << 15):
                    if ll < -(1LL << 31):
                        return put_be(&_out, 0xd3, <uint64_t>ll, 8)
                    return put_be(&_out, 0xd2, <uint64_t>ll & 0xffffffffULL, 4)
                if ll < -(1 << 7):
                    return put_be(&_out, 0xd1, <uint64_t>ll & 0xffffULL, 2)
                return put_be(&_out, 0xd0, <uint64_t>ll & 0xffULL, 1)
            if ll < (1 << 7):
                return put_byte(&_out, <uint8_t>(ll & 0xff))
            ull = <unsigned long long>ll
        elif overflow > 0:
            try:
                ull = PyLong_AsUnsignedLongLong(o)
            except OverflowError:
                return 1  # beyond 64 bits: msgpack raises its own error
        else:
            return 1  # below int64: msgpack raises its own error
        if ull < (1 << 8):
            return put_be(&_out, 0xcc, ull, 1)
        if ull < (1 << 16):
            return put_be(&_out, 0xcd, ull, 2)
        if ull < (1ULL << 32):
            return put_be(&_out, 0xce, ull, 4)
        return put_be(&_out, 0xcf, ull, 8)
    if t is float:
        d = PyFloat_AS_DOUBLE(o)
        memcpy(&bits, &d, 8)
        return put_be(&_out, 0xcb, bits, 8)
    if t is str:
        try:
            s = PyUnicode_AsUTF8AndSize(o, &n)
        except UnicodeError:
            return 1  # lone surrogates: msgpack raises the error
        if n < 32:
            put_byte(&_out, 0xa0 | <uint8_t>n)
        elif n < 256:
            put_be(&_out, 0xd9, n, 1)
        elif n < 65536:
            put_be(&_out, 0xda, n, 2)
        elif n <= 0xffffffff:
            put_be(&_out, 0xdb, n, 4)
        else:
            return 1
        return put_raw(&_out, s, n)
    if t is bytes:
        n = PyBytes_GET_SIZE(o)
        if n < 256:
            put_be(&_out, 0xc4, n, 1)
        elif n < 65536:
            put_be(&_out, 0xc5, n, 2)
        elif n <= 0xffffffff:
            put_be(&_out, 0xc6, n, 4)
        else:
            return 1
        return put_raw(&_out, PyBytes_AS_STRING(o), n)
    if t is list:
        n = PyList_GET_SIZE(o)
        if _array_head(n):
            return 1
        for i in range(n):
            if _pack(<object>PyList_GET_ITEM(o, i), depth + 1):
                return 1
        return 0
    if t is tuple:
        n = PyTuple_GET_SIZE(o)
        if _array_head(n):
            return 1
        for i in range(n):
            if _pack(<object>PyTuple_GET_ITEM(o, i), depth + 1):
                return 1
        return 0
    if t is dict:
        n = PyDict_GET_SIZE(o)
        if n < 16:
            put_byte(&_out, 0x80 | <uint8_t>n)
        elif n < 65536:
            put_be(&_out, 0xde, n, 2)
        elif n <= 0xffffffff:
            put_be(&_out, 0xdf, n, 4)
        else:
            return 1
        pos = 0
        while PyDict_Next(o, &pos, &k, &v):
            if _pack(<object>k, depth + 1) or _pack(<object>v, depth + 1):
                return 1
        return 0
    return 1

cdef inline int _array_head(Py_ssize_t n) except -1:
    if n < 16:
        put_byte(&_out, 0x90 | <uint8_t>n)
    elif n < 65536:
        put_be(&_out, 0xdc, n, 2)
    elif n <= 0xffffffff:
        put_be(&_out, 0xdd, n, 4)
    else:
        return 1
    return 0

# -- CRC-32 (zlib's polynomial; zlib.crc32 for long keys) --------------------------------
cdef uint32_t _crc_table[256]

cdef void _crc_init():
    cdef uint32_t c
    cdef int i, j
    for i in range(256):
        c = <uint32_t>i
        for j in range(8):
            c = (0xedb88320 ^ (c >> 1)) if (c & 1) else (c >> 1)
        _crc_table[i] = c

_crc_init()
_zlib_crc32 = zlib.crc32

cdef object _crc(Py_ssize_t start, Py_ssize_t end):
    cdef uint32_t c = 0xffffffff
    cdef Py_ssize_t i
    if end - start > _ZLIB_FROM:
        return _zlib_crc32(PyBytes_FromStringAndSize(_out.buf + start, end - start))
    for i in range(start, end):
        c = _crc_table[(c ^ <uint8_t>_out.buf[i]) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff

# -- the public functions: the same names, arguments, results and errors as codec.py -----
def pack_row(values):
    """A row's values as msgpack (``MsgpackSerializer.dumps``); msgpack's own errors."""
    _calls[_F_PACK_ROW] += 1
    _out.len = 0
    try:
        if _pack(values, 0):
            _to_twin(_F_PACK_ROW)
            return _pure.pack_row(values)
        return take(&_out)
    finally:
        release(&_out)

def key_hash(value):
    """The fields-grouping hash of one key value: CRC-32 of its msgpack bytes."""
    _calls[_F_KEY_HASH] += 1
    _out.len = 0
    try:
        if _pack(value, 0):
            _to_twin(_F_KEY_HASH)
            return _pure.key_hash(value)
        return _crc(0, _out.len)
    finally:
        release(&_out)

def pack_row_hash(values, Py_ssize_t index):
    """``(pack_row(values), key_hash(values[index]))`` in one pass: the key's msgpack
    bytes are a slice of the row's, so they are hashed where they lie."""
    _calls[_F_PACK_ROW_HASH] += 1
    packed = _pack_row_hash(values, index)
    if packed is None:
        _to_twin(_F_PACK_ROW_HASH)
        return _pure.pack_row_hash(values, index)
    return packed

cdef tuple _pack_row_hash(object values, Py_ssize_t index):
    """``(payload, key hash)``, or None when the row is the pure twin's to pack."""
    cdef type t = type(values)
    cdef Py_ssize_t n, i, start = 0, end = 0
    cdef object item
    if t is list:
        n = PyList_GET_SIZE(values)
    elif t is tuple:
        n = PyTuple_GET_SIZE(values)
    else:
        return None
    if index < 0 or index >= n:
        return None
    _out.len = 0
    try:
        if _array_head(n):
            return None
        for i in range(n):
            if t is list:
                item = <object>PyList_GET_ITEM(values, i)
            else:
                item = <object>PyTuple_GET_ITEM(values, i)
            if i == index:
                start = _out.len
            if _pack(item, 1):
                return None
            if i == index:
                end = _out.len
        return take(&_out), _crc(start, end)
    finally:
        release(&_out)

def append_key_hashes(list hashes, values, key_indices):
    """Append one hash per grouping field list: a single field hashes its value, several
    fields hash the list of their values."""
    cdef unsigned long long mark = _handoffs
    _calls[_F_APPEND_KEY_HASHES] += 1
    try:
        for indices in key_indices:
            if len(indices) > 1:
                hashes.append(key_hash([values[i] for i in indices]))
            else:
                hashes.append(key_hash(values[indices[0]]))
    finally:
        if _handoffs != mark:
            _handed[_F_APPEND_KEY_HASHES] += 1

# -- protobuf: TupleBatch as upb serializes it (field-number order, packed columns) -----
cdef inline bint _int32(object o):
    return type(o) is int and -2147483648 <= o <= 2147483647

cdef inline bint _uint32(object o):
    return type(o) is int and 0 <= o <= 4294967295

cdef inline bint _uint64(object o):
    return type(o) is int and 0 <= o <= 18446744073709551615

cdef int _packed(int field, object column, int kind) except -1:
    """A packed repeated column (kind 0: int32 varint, 1: uint32 varint, 2: fixed32,
    3: fixed64). Returns 1 when an entry is not exactly of the field's type and range."""
    cdef Py_ssize_t size = 0
    cdef object x
    if type(column) is not list and type(column) is not tuple:
        return 1
    if len(column) == 0:
        return 0
    for x in column:
        if kind == 0:
            if not _int32(x):
                return 1
            size += varint_size(<uint64_t><int64_t>(<long long>x))
        elif kind == 1:
            if not _uint32(x):
                return 1
            size += varint_size(<uint64_t>(<unsigned long long>x))
        elif kind == 2:
            if not _uint32(x):
                return 1
            size += 4
        else:
            if not _uint64(x):
                return 1
            size += 8
    put_varint(&_out, (field << 3) | 2)
    put_varint(&_out, size)
    for x in column:
        if kind == 0:
            put_varint(&_out, <uint64_t><int64_t>(<long long>x))
        elif kind == 1:
            put_varint(&_out, <uint64_t>(<unsigned long long>x))
        elif kind == 2:
            put_le(&_out, <uint64_t>(<unsigned long long>x), 4)
        else:
            put_le(&_out, <uint64_t>(<unsigned long long>x), 8)
    return 0

cdef int _encode_batch(object src_task, object component, object stream, object values,
                       object key_hash_width, object key_hashes, object dest_counts,
                       object dest_tasks, object root_counts, object root_tasks,
                       object root_keys) except -1:
    cdef const char* c_stream
    cdef const char* c_component
    cdef Py_ssize_t n_stream, n_component, n
    cdef object blob
    if type(stream) is not str or type(component) is not str or not _int32(src_task):
        return 1
    if type(values) is not list and type(values) is not tuple:
        return 1
    try:
        c_stream = PyUnicode_AsUTF8AndSize(stream, &n_stream)
        c_component = PyUnicode_AsUTF8AndSize(component, &n_component)
    except UnicodeError:
        return 1
    # 1: stream {1: id, 2: component_name}
    n = 1 + varint_size(n_stream) + n_stream + 1 + varint_size(n_component) + n_component
    put_byte(&_out, 0x0a)
    put_varint(&_out, n)
    put_byte(&_out, 0x0a)
    put_varint(&_out, n_stream)
    put_raw(&_out, c_stream, n_stream)
    put_byte(&_out, 0x12)
    put_varint(&_out, n_component)
    put_raw(&_out, c_component, n_component)
    # 2: src_task_id (int32: negative numbers take ten bytes, sign-extended)
    put_byte(&_out, 0x10)
    put_varint(&_out, <uint64_t><int64_t>(<long long>src_task))
    # 3: values, one length-delimited entry per row
    for blob in values:
        if type(blob) is not bytes:
            return 1
        put_byte(&_out, 0x1a)
        put_varint(&_out, PyBytes_GET_SIZE(blob))
        put_raw(&_out, PyBytes_AS_STRING(blob), PyBytes_GET_SIZE(blob))
    if key_hash_width:
        if not _uint32(key_hash_width):
            return 1
        put_byte(&_out, 0x20)
        put_varint(&_out, <uint64_t>(<unsigned long long>key_hash_width))
        if _packed(5, key_hashes, 2):
            return 1
    if dest_counts:
        if _packed(6, dest_counts, 1) or _packed(7, dest_tasks, 0):
            return 1
    if root_counts:
        if (_packed(8, root_counts, 1) or _packed(9, root_tasks, 0)
                or _packed(10, root_keys, 3)):
            return 1
    return 0

def encode_batch(src_task, component, stream, values, key_hash_width, key_hashes,
                 dest_counts, dest_tasks, root_counts, root_tasks, root_keys):
    """The serialized ``TupleBatch`` of an instance's rows, byte for byte what protobuf
    writes (``codec.encode_batch``); anything not exactly of its field's type and range
    is left to protobuf, for its own error."""
    _calls[_F_ENCODE_BATCH] += 1
    _out.len = 0
    try:
        if _encode_batch(src_task, component, stream, values, key_hash_width, key_hashes,
                         dest_counts, dest_tasks, root_counts, root_tasks, root_keys):
            _to_twin(_F_ENCODE_BATCH)
            return _pure.encode_batch(src_task, component, stream, values, key_hash_width,
                                      key_hashes, dest_counts, dest_tasks, root_counts,
                                      root_tasks, root_keys)
        return take(&_out)
    finally:
        release(&_out)

# -- a bolt's acks and fails as one ControlBatch ---------------------------------------
cdef bint _control_entry(object item, Py_ssize_t* nroots):
    """Whether ``item`` is ``(kind, ((root task, root key)..., tuple key))`` with every
    number exactly of its field's type and range (a kind ControlKind names); counts its
    roots."""
    cdef object entry, tree, root
    if type(item) is not tuple or len(<tuple>item) != 2:
        return False
    if type(item[0]) is not int or not (1 <= item[0] <= 3):
        return False
    entry = item[1]
    if type(entry) is not tuple or len(<tuple>entry) != 2 or not _uint64(entry[1]):
        return False
    tree = entry[0]
    if type(tree) is not tuple:
        return False
    for root in <tuple>tree:
        if (type(root) is not tuple or len(<tuple>root) != 2 or not _int32(root[0])
                or not _uint64(root[1])):
            return False
    nroots[0] += len(<tuple>tree)
    return True

cdef inline void _column_head(int field, Py_ssize_t size):
    put_varint(&_out, (field << 3) | 2)
    put_varint(&_out, size)

def encode_control(src_task, list settled):
    """The serialized ``ControlBatch`` of a bolt's settled inputs, byte for byte what
    protobuf writes (``codec.encode_control``); anything not exactly of its field's type
    and range is left to protobuf, for its own result or error."""
    cdef Py_ssize_t n = len(settled), roots = 0, size, k
    cdef object item, tree, root
    _calls[_F_ENCODE_CONTROL] += 1
    if not _int32(src_task):
        _to_twin(_F_ENCODE_CONTROL)
        return _pure.encode_control(src_task, settled)
    for item in settled:
        if not _control_entry(item, &roots):
            _to_twin(_F_ENCODE_CONTROL)
            return _pure.encode_control(src_task, settled)
    _out.len = 0
    try:
        put_byte(&_out, 0x08)
        put_varint(&_out, <uint64_t><int64_t>(<long long>src_task))
        if n:
            _column_head(2, n)  # kinds: 1-3, one byte each
            for item in settled:
                put_byte(&_out, <uint8_t>(<long>item[0]))
            size = 0
            for item in settled:
                size += varint_size(<uint64_t>len(<tuple>item[1][0]))
            _column_head(3, size)
            for item in settled:
                put_varint(&_out, <uint64_t>len(<tuple>item[1][0]))
        if roots:
            size = 0
            for item in settled:
                for root in <tuple>item[1][0]:
                    size += varint_size(<uint64_t><int64_t>(<long long>root[0]))
            _column_head(4, size)
            for item in settled:
                for root in <tuple>item[1][0]:
                    put_varint(&_out, <uint64_t><int64_t>(<long long>root[0]))
            _column_head(5, 8 * roots)
            for item in settled:
                for root in <tuple>item[1][0]:
                    put_le(&_out, <uint64_t>(<unsigned long long>root[1]), 8)
        if n:
            _column_head(6, 8 * n)
            for item in settled:
                put_le(&_out, <uint64_t>(<unsigned long long>item[1][1]), 8)
        return take(&_out)
    finally:
        release(&_out)
