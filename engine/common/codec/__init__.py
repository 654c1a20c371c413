"""The tuple codec, and the one switch that picks compiled or pure-Python code.

Every per-tuple module of the engine comes in two twins with the same names, results
and errors: a pure-Python reference, which is also the fallback, and the same code
compiled with Cython (built by ``setup.py`` when a C compiler is there). Each twin sits
with the role it serves: the instance's component API path (``engine/instance/api.py``
and ``_api.pyx``), the Stream Manager's routing, XOR maps and acking
(``engine/stmgr/routing.py``, ``xor.py``, ``acking.py`` and ``_routing.pyx``,
``_xor.pyx``, ``_acking.pyx``). What the roles share is here: the tuple codec
(``codec.py`` and ``_codec.pyx``: rows, batches, acks, a batch's ``Tuple`` objects),
the values both twins share (``markers.py``), the list of compiled modules and their
sources' hashes (``sources.py``) and the switch (``selection.py``), which decides once
per process which set runs (``HERON_PURE_PYTHON``, ``HERON_REQUIRE_COMPILED``, the
hash of the sources each build embeds). Callers go through it::

    from engine.common.codec import tuple_codec
    payload, key = tuple_codec.pack_row_hash(values, 0)

    from engine.common.codec import selected_module
    routing = selected_module("routing")   # engine.stmgr._routing, or .routing

(``engine.common.codec.codec`` is always the pure twin, ``engine.common.codec._codec`` the compiled
one, for tests that compare them.)

See docs/compiled-path.md.
"""

from __future__ import annotations

from types import ModuleType

from engine.common.codec.markers import MalformedBatch, RowNotPacked, Undecodable
from engine.common.codec.selection import (
    ExtensionMissingError,
    Selection,
    StaleExtensionError,
    TuplePathError,
    log_tuple_path,
    selected,
)


def selected_module(name: str) -> ModuleType:
    """The module this process runs for ``name`` (``codec``, ``api``, ``routing``,
    ``xor``, ``acking``): the compiled twin where it is built and fresh, else the pure
    one; a process never runs a mix."""
    return selected().modules[name]


#: the tuple codec this process runs (``engine.common.codec._codec`` or ``.codec``); looked up
#: on first use (``__getattr__``), not at this package's import, because the pure twins
#: of the roles import ``markers`` from here while the selection imports them
tuple_codec: ModuleType


def __getattr__(name: str) -> ModuleType:
    if name == "tuple_codec":
        return selected().module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["ExtensionMissingError", "MalformedBatch", "RowNotPacked", "Selection",
           "StaleExtensionError", "TuplePathError", "Undecodable", "log_tuple_path",
           "selected", "selected_module", "tuple_codec"]
