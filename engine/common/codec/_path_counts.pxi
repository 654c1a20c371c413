# The compiled path's counters, written once for every compiled module (``include``d by
# each .pyx; ``path_counts.py`` is the pure twins' side). They say how much of a
# comparison ran compiled: per public function, the calls a module handled itself and the
# calls it handed (whole or in part) to its pure twin, one C increment per call.
#
# The including module defines first, in this order: an enum of its public functions
# (``_F_...``) ending with ``_NFUNCS``, and ``_FUNCTIONS``, their names in the enum's
# order. It then adds 1 to ``_calls[_F_X]`` on each call of X and to ``_handed[_F_X]``
# when X hands work to the pure twin.

cdef unsigned long long _calls[_NFUNCS]
cdef unsigned long long _handed[_NFUNCS]

def path_counts():
    """``{function: (calls handled here, calls handed to the pure twin)}`` since the
    module was loaded or ``reset_path_counts()``; a call that raises counts where it
    raised. A pure twin's ``path_counts()`` is empty: nothing there runs compiled."""
    cdef int f
    return {_FUNCTIONS[f]: (_calls[f] - _handed[f], _handed[f]) for f in range(_NFUNCS)}

def reset_path_counts():
    """Set every count of ``path_counts()`` to 0."""
    cdef int f
    for f in range(_NFUNCS):
        _calls[f] = 0
        _handed[f] = 0

reset_path_counts()
