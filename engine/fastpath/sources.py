"""The hashes of the compiled tuple path's sources, one per compiled module, computed the
same way at build time (``setup.py`` loads this file by path, before the package can be
imported) and at import time (``engine.fastpath.selection``), so a build made from other sources is recognised.

Only the standard library is used here: ``setup.py`` runs it in pip's isolated build
environment, where none of the project's dependencies are installed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: Each compiled module, as imported, and the files it is compiled from (relative to this
#: directory); each embeds the hash of its own files, so a change to any of them makes
#: that build stale (and a rebuild regenerates exactly the modules whose files changed).
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "engine.fastpath._codec": ("_codec.pyx", "_codec.pxd", "_scratch.pxd"),
    "engine.fastpath._stmgr": ("_stmgr.pyx", "_scratch.pxd", "_wire.pxd"),
    "engine.fastpath._api": ("_api.pyx", "_codec.pxd", "_wire.pxd"),
}

#: Each compiled module's pure-Python twin: the reference and the fallback.
PURE_TWINS: dict[str, str] = {
    "engine.fastpath._codec": "engine.fastpath.codec",
    "engine.fastpath._stmgr": "engine.fastpath.stmgr",
    "engine.fastpath._api": "engine.fastpath.api",
}

#: The tuple codec's compiled module (the first of ``EXTENSIONS``).
EXTENSION_MODULE = "engine.fastpath._codec"


def sources_hash(directory: str | Path | None = None,
                 module: str = EXTENSION_MODULE) -> str:
    """SHA-256 (first 16 hex digits) over the names and bytes of the sources of the
    compiled ``module`` (one of ``EXTENSIONS``) in ``directory`` (this package's
    directory by default). Raises ``FileNotFoundError`` when a source is missing, as in
    an install that dropped them: the build cannot be checked then, and the caller
    decides what that means."""
    base = Path(directory) if directory is not None else Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in EXTENSIONS[module]:
        data = (base / name).read_bytes()
        digest.update(name.encode())
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()[:16]
