"""Each compiled module's list of sources (``sources.EXTENSIONS``) holds every file its
build reads: the .pyx, the .pxd beside it, the .pxi files it includes and the .pxd files
it cimports from the engine, followed through those files in turn. A file left out would
not be hashed, so a build made before a change to it would still pass as fresh; and one
not shipped as package data would make an installed copy's check fail.

The counters every compiled module reports (``path_counts()``) are written once: one
.pxi included by each .pyx, one pure helper the pure twins share."""

from __future__ import annotations

import importlib
import re
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

import pytest

from engine.common.codec import path_counts as pure_counts
from engine.common.codec.sources import (
    BUILD_IDENTITY,
    ENGINE_DIR,
    EXTENSIONS,
    PATH_COUNTS,
    PURE_TWINS,
)

REPO = ENGINE_DIR.parent
INCLUDE = re.compile(r'^\s*include\s+"([^"]+)"', re.M)
CIMPORT = re.compile(r"^\s*from\s+(engine(?:\.\w+)+)\s+cimport\b", re.M)


def _relative(path: Path) -> str:
    return path.resolve().relative_to(ENGINE_DIR).as_posix()


def files_read(pyx: str) -> set[str]:
    """``pyx`` and every engine file its build reads, relative to ``engine/``."""
    seen: set[str] = set()
    todo = [ENGINE_DIR / pyx]
    own_pxd = (ENGINE_DIR / pyx).with_suffix(".pxd")
    if own_pxd.exists():
        todo.append(own_pxd)
    while todo:
        path = todo.pop()
        name = _relative(path)
        if name in seen:
            continue
        seen.add(name)
        text = path.read_text()
        todo.extend(path.parent / included for included in INCLUDE.findall(text))
        todo.extend(REPO.joinpath(*module.split(".")).with_suffix(".pxd")
                    for module in CIMPORT.findall(text))
    return seen


@pytest.mark.parametrize("module", sorted(EXTENSIONS))
def test_every_file_a_build_reads_is_hashed(module: str) -> None:
    names = EXTENSIONS[module]
    (pyx,) = [name for name in names if name.endswith(".pyx")]
    assert files_read(pyx) <= set(names)


def test_every_listed_source_ships_as_package_data() -> None:
    table = (REPO / "pyproject.toml").read_text().split("[tool.setuptools.package-data]")[1]
    engine = re.search(r"^engine\s*=\s*\[(.*?)\]", table, re.S | re.M)
    assert engine, "no package-data for engine in pyproject.toml"
    globs = re.findall(r'"([^"]+)"', engine.group(1))
    assert globs
    for names in EXTENSIONS.values():
        for name in names:
            assert any(fnmatch(str(PurePosixPath(name)), glob) for glob in globs), name


@pytest.mark.parametrize("module", sorted(EXTENSIONS))
def test_each_compiled_module_includes_the_one_copy_of_the_counters(module: str) -> None:
    assert PATH_COUNTS in EXTENSIONS[module]
    (pyx,) = [name for name in EXTENSIONS[module] if name.endswith(".pyx")]
    assert PATH_COUNTS in files_read(pyx)
    text = (ENGINE_DIR / pyx).read_text()
    assert "def path_counts" not in text and "def reset_path_counts" not in text


@pytest.mark.parametrize("module", sorted(EXTENSIONS))
def test_each_compiled_module_includes_the_one_build_identity(module: str) -> None:
    assert BUILD_IDENTITY in EXTENSIONS[module]
    (pyx,) = [name for name in EXTENSIONS[module] if name.endswith(".pyx")]
    assert BUILD_IDENTITY in files_read(pyx)
    text = (ENGINE_DIR / pyx).read_text()
    assert "HERON_SOURCES_HASH" not in text and "COMPILED = " not in text


@pytest.mark.parametrize("twin", sorted(set(PURE_TWINS.values())))
def test_the_pure_twins_share_one_helper(twin: str) -> None:
    module = importlib.import_module(twin)
    if not hasattr(module, "path_counts"):  # engine.instance.api keeps no counts
        assert twin == "engine.instance.api"
        return
    assert module.path_counts is pure_counts.path_counts
    assert module.reset_path_counts is pure_counts.reset_path_counts
    assert module.path_counts() == {}
