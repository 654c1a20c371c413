"""``path_counts()`` and ``reset_path_counts()`` for the pure twins (``codec.py``,
``engine/stmgr/routing.py``, ``xor.py``, ``acking.py``), written once: each twin exposes
them so a caller asks whichever twin it holds how much ran compiled. Nothing in a pure
twin runs compiled, so there is nothing to count; the compiled modules' counters are
``_path_counts.pxi``."""

from __future__ import annotations


def path_counts() -> dict[str, tuple[int, int]]:
    """The compiled twin's ``{function: (calls handled compiled, calls handed to this
    twin)}``; empty here, where nothing runs compiled (so callers iterate either)."""
    return {}


def reset_path_counts() -> None:
    """The compiled twin's counts start over; nothing to do here."""
