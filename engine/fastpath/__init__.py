"""The compiled tuple path and its pure-Python twin (issue 20).

``codec.py`` is the reference, in Python; ``_codec.pyx`` is the same functions compiled
with Cython, built by ``setup.py`` when a C compiler is there. ``stmgr.py`` and
``_stmgr.pyx`` are the same pair for the Stream Manager's routing and XOR acking
(``stmgr_path``, handed out by ``engine.stmgr.routing``, ``.xor`` and ``.acking``), and
``api.py`` and ``_api.pyx`` for the component API's per-tuple path in an instance
(``api_path``: the collector's hot half, a stock spout's and bolt's ``emit``, a bolt's
batch, a spout's burst).
``selection.py`` decides once per process which pair runs (``HERON_PURE_PYTHON``, ``HERON_REQUIRE_COMPILED``, the
hash of the sources the build embeds); ``tuple_codec`` below is that choice, and every
caller goes through it::

    from engine.fastpath import tuple_codec
    payload, key = tuple_codec.pack_row_hash(values, 0)

(``engine.fastpath.codec`` is always the pure twin, ``engine.fastpath._codec`` the
compiled one, for tests that compare them.)

See docs/compiled-path.md.
"""

from __future__ import annotations

from engine.fastpath.markers import MalformedBatch, RowNotPacked, Undecodable
from engine.fastpath.selection import (ExtensionMissingError, Selection, StaleExtensionError,
                                       TuplePathError, log_tuple_path, selected)

#: the implementation this process runs (``engine.fastpath._codec`` or ``.codec``)
tuple_codec = selected().module
#: the Stream Manager's routing and XOR acking (``engine.fastpath._stmgr`` or ``.stmgr``)
stmgr_path = selected().modules["stmgr"]
#: the component API's per-tuple path in an instance (``engine.fastpath._api`` or ``.api``)
api_path = selected().modules["api"]

__all__ = ["ExtensionMissingError", "Selection", "StaleExtensionError", "TuplePathError",
           "MalformedBatch", "RowNotPacked", "Undecodable", "tuple_codec", "stmgr_path", "api_path", "log_tuple_path",
           "selected"]
