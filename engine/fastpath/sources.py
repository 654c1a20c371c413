"""The hash of the compiled tuple path's sources, computed the same way at build time
(``setup.py`` loads this file by path, before the package can be imported) and at import
time (``engine.fastpath.selection``), so a build made from other sources is recognised.

Only the standard library is used here: ``setup.py`` runs it in pip's isolated build
environment, where none of the project's dependencies are installed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: The files the extension is compiled from, relative to this directory. A change to any
#: of them makes an existing build stale.
COMPILED_SOURCES: tuple[str, ...] = ("_codec.pyx",)

#: The compiled module, as imported.
EXTENSION_MODULE = "engine.fastpath._codec"


def sources_hash(directory: str | Path | None = None) -> str:
    """SHA-256 (first 16 hex digits) over the names and bytes of ``COMPILED_SOURCES`` in
    ``directory`` (this package's directory by default). Raises ``FileNotFoundError``
    when a source is missing, as in an install that dropped them: the build cannot be
    checked then, and the caller decides what that means."""
    base = Path(directory) if directory is not None else Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in COMPILED_SOURCES:
        data = (base / name).read_bytes()
        digest.update(name.encode())
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()[:16]
