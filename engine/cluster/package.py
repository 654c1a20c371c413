"""The topology package: what a node needs to run a container, in one checked archive.

``heron submit CLUSTER`` packs the project as ``sparse submit`` packs its jar: the
``topologies/`` and ``src/`` folders, ``config.json`` / ``heron.yaml``, requirements
files and ``virtualenvs/*.txt``, plus ``heron-package.json`` (the topology, the
submission's options and the engine version that packed it). Nothing else: no logs, no
virtual environments, no ``.git``, no caches. The uploader puts it where nodes fetch it
and the scheduler hands them its SHA-256, which a node checks before it unpacks a single
file; a node whose engine differs from the submitter's refuses to start, naming both.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, Iterator

MANIFEST = "heron-package.json"
#: project entries a package carries (directories are walked; files taken as they are)
PROJECT_ENTRIES = ("topologies", "src", "config.json", "heron.yaml", "requirements.txt",
                   "requirements-dev.txt", "virtualenvs", "project.clj")
#: never packed, wherever they appear
SKIPPED_DIRS = {"__pycache__", ".git", ".hg", ".svn", "logs", ".venv", "venv", ".tox",
                ".mypy_cache", ".pytest_cache", "build", "dist", "_build", "_resources"}
_CHUNK = 1 << 20


class PackageError(Exception):
    """A package that cannot be built, fetched or trusted; the text names it."""


@dataclass(frozen=True)
class Package:
    path: Path
    sha256: str
    size: int


@functools.lru_cache(maxsize=1)
def engine_version() -> str:
    """The engine that packs or runs a package: the distribution's version and a digest
    of the engine's and compat layer's Python sources, so two nodes with the same version
    number but different code are told apart (``0.1.0+src.1a2b3c4d5e6f``)."""
    try:
        number = version("heron-storm-compat")
    except Exception:  # a checkout that is not installed
        number = "0"
    code_root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for package in ("engine", "compat"):
        for path in sorted((code_root / package).rglob("*.py")):
            digest.update(path.relative_to(code_root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return f"{number}+src.{digest.hexdigest()[:12]}"


def sha256_of(path: Path | str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _project_files(root: Path) -> Iterator[Path]:
    for entry in PROJECT_ENTRIES:
        path = root / entry
        if path.is_symlink():
            raise PackageError(f"{path}: is a symbolic link; a package holds regular files "
                               f"only (copy what it points to into the project)")
        if path.is_file():
            yield path
        elif path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS
                                     and not (entry == "virtualenvs"))
                for name in sorted(filenames):
                    file = Path(dirpath) / name
                    if name.endswith((".pyc", ".pyo")):
                        continue
                    if entry == "virtualenvs" and not name.endswith(".txt"):
                        continue
                    if file.is_symlink() or not file.is_file():
                        raise PackageError(f"{file}: not a regular file; a package holds "
                                           f"regular files only")
                    yield file


def build_package(project: Path | str, manifest: dict[str, Any], out_dir: Path | str) -> Package:
    """Pack ``project`` (a streamparse project directory) with ``manifest`` into
    ``out_dir/<topology>.tar.gz``; written under a temporary name and renamed, so a
    package is complete or absent."""
    root = Path(project).resolve()
    if not root.is_dir():
        raise PackageError(f"{root}: a cluster package is built from a project directory "
                           f"(topologies/, src/, config.json)")
    if not (root / "topologies").is_dir():
        raise PackageError(f"{root}: no topologies/ folder; nothing to pack")
    name = str(manifest.get("topology") or "topology")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = json.dumps({**manifest, "engine_version": engine_version()}, indent=2,
                      sort_keys=True).encode()
    fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.", suffix=".tar.gz")
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            info = tarfile.TarInfo(MANIFEST)
            info.size = len(data)
            info.mode = 0o600
            tar.addfile(info, io.BytesIO(data))
            for file in _project_files(root):
                arcname = file.relative_to(root).as_posix()
                info = tar.gettarinfo(str(file), arcname)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                with open(file, "rb") as fh:
                    tar.addfile(info, fh)
        target = out / f"{name}.tar.gz"
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Package(target, sha256_of(target), target.stat().st_size)


def unpack_package(archive: Path | str, expected_sha256: str, dest: Path | str) -> dict[str, Any]:
    """Check ``archive`` against ``expected_sha256``, then unpack it into ``dest`` (which
    must not exist yet) and return its manifest. A mismatch, an entry that would land
    outside ``dest``, a link or a device, or a manifest from another engine version is a
    PackageError and leaves no ``dest`` behind."""
    archive = Path(archive)
    actual = sha256_of(archive)
    if actual != expected_sha256.lower():
        raise PackageError(f"{archive}: SHA-256 mismatch: expected {expected_sha256}, got "
                           f"{actual} (the package changed after submit, or the download "
                           f"was damaged); refusing to unpack it")
    dest = Path(dest)
    staging = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}."))
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for member in tar.getmembers():
                if not (member.isfile() or member.isdir()):
                    raise PackageError(f"{archive}: {member.name!r} is not a regular file or "
                                       f"directory; refusing the package")
            tar.extractall(staging, filter="data")
        manifest_path = staging / MANIFEST
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, ValueError) as exc:
            raise PackageError(f"{archive}: no readable {MANIFEST}: {exc}") from None
        packed_by = manifest.get("engine_version")
        ours = engine_version()
        if packed_by != ours:
            raise PackageError(f"{archive}: packed by engine version {packed_by}, but this "
                               f"node runs {ours}; install the same version on every node")
        os.replace(staging, dest)
        return manifest
    except tarfile.TarError as exc:
        raise PackageError(f"{archive}: not a readable package: {exc}") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
