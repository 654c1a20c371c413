# Which build a compiled module is, written once for every compiled module (``include``d by
# each .pyx): ``COMPILED`` (the pure twins say False) and ``SOURCES_HASH``, the hash of
# the sources it was built from, which setup.py passes to the C compiler and
# ``engine.common.codec.selection`` compares with the sources in the tree at import.

cdef extern from *:
    """
    #ifndef HERON_SOURCES_HASH
    #define HERON_SOURCES_HASH ""
    #endif
    """
    const char* HERON_SOURCES_HASH

#: True here, False in the pure twin: which one a caller holds.
COMPILED = True
#: The hash of the sources this module was built from (empty when built without it).
SOURCES_HASH = HERON_SOURCES_HASH.decode("ascii")
