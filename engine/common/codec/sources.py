"""The hashes of the compiled tuple path's sources, one per compiled module, computed the
same way at build time (``setup.py`` loads this file by path, before the package can be
imported) and at import time (``engine.common.codec.selection``), so a build made from other
sources is recognised.

Only the standard library is used here: ``setup.py`` runs it in pip's isolated build
environment, where none of the project's dependencies are installed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: The counters every compiled module includes (``path_counts()``,
#: ``reset_path_counts()``): one of each module's files, so changing them makes every
#: build stale.
#: what every compiled module includes: its build identity and its path counters
BUILD_IDENTITY = "common/codec/_build_identity.pxi"
PATH_COUNTS = "common/codec/_path_counts.pxi"
SHARED_PXI = (BUILD_IDENTITY, PATH_COUNTS)

#: Each compiled module, as imported, and the files it is compiled from (relative to the
#: ``engine`` package's directory: each sits with the role it serves); each embeds the
#: hash of its own files, so a change to any of them makes that build stale (and a
#: rebuild regenerates exactly the modules whose files changed).
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "engine.common.codec._codec": ("common/codec/_codec.pyx", "common/codec/_encode.pxi",
                                   "common/codec/_codec.pxd", "common/codec/_scratch.pxd",
                                   *SHARED_PXI),
    "engine.stmgr._routing": ("stmgr/_routing.pyx", "stmgr/_routing.pxd",
                              "common/codec/_scratch.pxd", "common/codec/_wire.pxd",
                              *SHARED_PXI),
    "engine.stmgr._xor": ("stmgr/_xor.pyx", "stmgr/_xor.pxd", *SHARED_PXI),
    "engine.stmgr._acking": ("stmgr/_acking.pyx", "stmgr/_routing.pxd", "stmgr/_xor.pxd",
                             "common/codec/_scratch.pxd", *SHARED_PXI),
    "engine.instance._api": ("instance/_api.pyx", "common/codec/_codec.pxd",
                             "common/codec/_wire.pxd", *SHARED_PXI),
}

#: Each compiled module's pure-Python twin: the reference and the fallback.
PURE_TWINS: dict[str, str] = {
    "engine.common.codec._codec": "engine.common.codec.codec",
    "engine.stmgr._routing": "engine.stmgr.routing",
    "engine.stmgr._xor": "engine.stmgr.xor",
    "engine.stmgr._acking": "engine.stmgr.acking",
    "engine.instance._api": "engine.instance.api",
}

#: The tuple codec's compiled module (the first of ``EXTENSIONS``).
EXTENSION_MODULE = "engine.common.codec._codec"

#: The directory ``EXTENSIONS``' files are relative to: the ``engine`` package's.
ENGINE_DIR = Path(__file__).resolve().parents[2]


def sources_hash(directory: str | Path | None = None,
                 module: str = EXTENSION_MODULE) -> str:
    """SHA-256 (first 16 hex digits) over the names and bytes of the sources of the
    compiled ``module`` (one of ``EXTENSIONS``) under ``directory`` (the ``engine``
    package's directory by default). Raises ``FileNotFoundError`` when a source is missing, as in
    an install that dropped them: the build cannot be checked then, and the caller
    decides what that means."""
    base = Path(directory) if directory is not None else ENGINE_DIR
    digest = hashlib.sha256()
    for name in EXTENSIONS[module]:
        data = (base / name).read_bytes()
        digest.update(name.encode())
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()[:16]
