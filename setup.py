"""Builds the optional compiled tuple path (Cython 3: the modules listed in
``engine/common/codec/sources.py``, each beside the role it serves:
``engine/common/codec/_codec.pyx``,
``engine/instance/_api.pyx``, ``engine/stmgr/_routing.pyx``, ``_xor.pyx``, ``_acking.pyx``).

Everything else about the package is in pyproject.toml. The extension is optional: when
it cannot be built (no C compiler, no Python headers, no Cython), the install still
succeeds, prints one line saying the pure-Python tuple path will be used, and
``engine.common.codec`` selects that path at run time. ``python3 -m pip install -e .``
builds the extension in place, beside its sources, where ``python -m engine...``
processes import it.

Each extension embeds the hash of its sources (``engine/common/codec/sources.py``), so a
build left over from older sources is refused at import instead of running stale code.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
ENGINE = ROOT / "engine"
PURE_NOTE = ("heron-storm-compat: the compiled tuple path was not built ({why}); "
             "the pure-Python tuple path will be used")


def _sources_module():
    """engine/common/codec/sources.py, loaded by path: the package itself cannot be imported
    here (its dependencies are not in the isolated build environment)."""
    spec = importlib.util.spec_from_file_location("_heron_codec_sources",
                                                  ENGINE / "common" / "codec" / "sources.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _note(why: str) -> None:
    print(PURE_NOTE.format(why=why), file=sys.stderr)


class OptionalBuildExt(build_ext):
    """build_ext that turns a failed compile into the one-line note: the extension is
    an accelerator with a pure-Python twin, never a requirement to install."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any failure means: no extension
            last = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
            _note(f"{type(exc).__name__}: {last}")

    def build_extension(self, ext) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001 - compiler missing or failing
            text = str(exc).strip()
            _note(f"{type(exc).__name__}: {text.splitlines()[-1] if text else 'compiler failed'}")


def _extensions() -> list:
    sources = _sources_module()
    try:
        from Cython.Build import cythonize
    except ImportError:
        _note("Cython is not installed")
        return []
    from setuptools import Extension

    # one extension per compiled module, each embedding the hash of its own sources
    # (a .pxd or .pxi among a module's files is cimported or included by its .pyx, such
    # as the shared counters and build identity, common/codec/_path_counts.pxi and
    # _build_identity.pxi: not compiled on its own)
    exts = [Extension(module, [str((ENGINE / name).relative_to(ROOT)) for name in names
                               if name.endswith(".pyx")],
                      define_macros=[("HERON_SOURCES_HASH",
                                      f'"{sources.sources_hash(ENGINE, module)}"')])
            for module, names in sources.EXTENSIONS.items()]
    try:
        return cythonize(exts, compiler_directives={"language_level": "3"}, quiet=True)
    except Exception as exc:  # noqa: BLE001 - a Cython error: still install, pure path
        _note(f"Cython failed: {exc}")
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
