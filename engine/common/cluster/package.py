"""The topology package: what a node needs to run a container, in one checked archive.

``heron submit CLUSTER`` packs the project as ``sparse submit`` packs its jar: the
``topologies/`` and ``src/`` folders, ``config.json`` / ``heron.yaml``, requirements
files and ``virtualenvs/*.txt``, plus ``heron-package.json`` (the topology, the
submission's options and the engine version that packed it). Nothing else: no logs, no
virtual environments, no ``.git``, no caches. The uploader puts it where nodes fetch it
and the scheduler hands them its SHA-256, which a node checks before it unpacks a single
file; a node whose engine differs from the submitter's refuses to start, naming both.

A Flux topology (compat/flux) is packed from what it reads instead (:func:`flux_contents`):
the YAML file, its ``resources/`` (shell components start there), the files its
``includes`` name, the project files beside it (``config.json``/``heron.yaml``,
requirements, ``virtualenvs/*.txt``) and, when a ``module:Class`` component is imported
from there, its ``src/`` or the module beside the YAML. Each file lands where the node's
``read_flux`` finds it again with the same include entries: a file found relative to the
YAML's directory keeps its place relative to it (the package's root is the ancestor
directory the farthest ``../`` reaches), and a file found relative to the working
directory goes under ``flux-cwd/``, which the node reads includes from (the submission's
``flux_cwd``). An absolute include path and a symbolic link cannot be carried that way and
are refused in one line.

A heronpy definition (``NAME.defn``, which ``heron submit CLUSTER FILE.pex - ARGS`` writes
by running the pex's main) is packed as the definition and the pex copy beside it
(:func:`definition_contents`): every process of a node reads the definition from the
unpacked package and imports the components' classes from the unpacked pex.
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
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from compat.flux import FluxTopology
from compat.flux.files import included_files

MANIFEST = "heron-package.json"
#: project entries a package carries (directories are walked; files taken as they are)
PROJECT_ENTRIES = ("topologies", "src", "config.json", "heron.yaml", "requirements.txt",
                   "requirements-dev.txt", "virtualenvs", "project.clj")
#: never packed, wherever they appear
SKIPPED_DIRS = {"__pycache__", ".git", ".hg", ".svn", "logs", ".venv", "venv", ".tox",
                ".mypy_cache", ".pytest_cache", "build", "dist", "_build", "_resources"}
#: project files beside a Flux file that a package carries (its config, its environment)
FLUX_PROJECT_ENTRIES = ("config.json", "heron.yaml", "requirements.txt",
                        "requirements-dev.txt", "virtualenvs")
#: a heronpy definition's file suffix (heronpy/api/definition.py SUFFIX)
DEFINITION_SUFFIX = ".defn"
#: where a Flux topology's includes found relative to the working directory go
FLUX_CWD_DIR = "flux-cwd"
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
    code_root = Path(__file__).resolve().parents[3]
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


def _not_a_link(path: Path) -> None:
    if path.is_symlink():
        raise PackageError(f"{path}: is a symbolic link; a package holds regular files "
                           f"only (copy what it points to into the project)")


def _entry_files(path: Path, *, txt_only: bool = False) -> Iterator[Path]:
    """The files of one project entry: the file itself, or the regular files of the
    directory (``txt_only``: its ``*.txt`` files, not its subdirectories), skipping
    caches, logs and build output."""
    _not_a_link(path)
    if path.is_file():
        yield path
    elif path.is_dir():
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not txt_only)
            for name in sorted(filenames):
                file = Path(dirpath) / name
                if name.endswith((".pyc", ".pyo")):
                    continue
                if txt_only and not name.endswith(".txt"):
                    continue
                _not_a_link(file)
                if not file.is_file():
                    raise PackageError(f"{file}: not a regular file; a package holds "
                                       f"regular files only")
                yield file


def _project_files(root: Path) -> Iterator[Path]:
    for entry in PROJECT_ENTRIES:
        yield from _entry_files(root / entry, txt_only=entry == "virtualenvs")


@dataclass(frozen=True)
class FluxContents:
    """What the package of a Flux topology holds, from :func:`flux_contents`."""

    #: archive name -> the file on this machine
    files: dict[str, Path]
    #: directories the package holds even when empty (``resources/``: its presence says
    #: where shell components start; the include directory: ``../`` walks through it)
    dirs: tuple[str, ...]
    #: the YAML file's archive name (the submission's project on the node)
    yaml: str
    #: the directory the node tries relative includes in first (its ``flux_cwd``)
    cwd: str
    #: the ``--config`` file's archive name, when there is one
    config_file: str | None = None
    #: each include's archive name -> the file it was read from here (for the record)
    includes: dict[str, str] | None = None


def _lexical(file: Path, include: Any) -> Path:
    """``file`` with ``..`` folded, as it will be found on the node; refused when the
    folded path is not the file (a symbolic link on the way) or is a link itself."""
    folded = Path(os.path.normpath(file))
    if file.is_symlink() or folded.resolve() != file.resolve():
        raise PackageError(f"{include.where}: include {include.file!r} reaches {file} through "
                           f"a symbolic link, which a package cannot carry; copy the file "
                           f"into the project")
    return folded


def _ups(relative: str) -> int:
    parts = Path(relative).parts
    return next((i for i, part in enumerate(parts) if part != ".."), len(parts))


def flux_contents(flux: FluxTopology, config_file: Path | str | None = None) -> FluxContents:
    """The files a node needs to rebuild ``flux`` exactly (module docstring), with their
    archive names; PackageError names what cannot be carried."""
    yaml_dir = flux.path.parent
    cwd = Path(flux.cwd or Path.cwd()).resolve()
    found = included_files(flux.path, flux.values, cwd)
    for entry in found:
        if entry.found == "absolute":
            raise PackageError(
                f"{entry.include.where}: include {entry.include.file!r} is an absolute path, "
                f"which a cluster's nodes do not have; name it relative to the YAML file "
                f"({yaml_dir}) or with resource: true")
    beside = [(e, _lexical(e.file, e.include)) for e in found if e.found != "cwd"]
    from_cwd = [(e, _lexical(e.file, e.include)) for e in found if e.found == "cwd"]
    up = max((_ups(os.path.relpath(f, yaml_dir)) for _, f in beside), default=0)
    root = yaml_dir.parents[up - 1] if up else yaml_dir
    up_cwd = max((_ups(os.path.relpath(f, cwd)) for _, f in from_cwd), default=0)
    cwd_root = cwd.parents[up_cwd - 1] if up_cwd else cwd
    files: dict[str, Path] = {}
    includes: dict[str, str] = {}

    def add(arcname: str, file: Path) -> str:
        arcname = Path(arcname).as_posix()
        if files.setdefault(arcname, file) != file:
            raise PackageError(f"{file} and {files[arcname]} would both be {arcname} in the "
                               f"package; rename one")
        return arcname

    def add_tree(path: Path, **options: Any) -> None:
        for file in _entry_files(path, **options):
            add(os.path.relpath(file, root), file)

    yaml = add(os.path.relpath(flux.path, root), flux.path)
    dirs: list[str] = []
    if (yaml_dir / "resources").is_dir():
        add_tree(yaml_dir / "resources")
        dirs.append(Path(os.path.relpath(yaml_dir / "resources", root)).as_posix())
    for project_entry in FLUX_PROJECT_ENTRIES:
        add_tree(yaml_dir / project_entry, txt_only=project_entry == "virtualenvs")
    for path in _python_sources(flux, yaml_dir):
        add_tree(path)
    config_arc = None
    if config_file is not None:
        config = Path(config_file).resolve()
        if yaml_dir not in config.parents:
            raise PackageError(f"{config_file}: a cluster submission's config file must be "
                               f"inside the Flux file's directory ({yaml_dir})")
        config_arc = add(os.path.relpath(config, root), config)
    for _entry, file in beside:
        includes[add(os.path.relpath(file, root), file)] = str(file)
    clash = next((a for a in files if a.split("/")[0] == FLUX_CWD_DIR), None)
    if clash is not None:
        raise PackageError(f"{root / clash}: a package keeps {FLUX_CWD_DIR}/ for includes "
                           f"found relative to the working directory; rename the folder")
    for _entry, file in from_cwd:
        includes[add(f"{FLUX_CWD_DIR}/{os.path.relpath(file, cwd_root)}", file)] = str(file)
    cwd_arc = Path(FLUX_CWD_DIR, os.path.relpath(cwd, cwd_root)).as_posix()
    if from_cwd:
        dirs.extend(sorted([cwd_arc, *(p.as_posix() for p in Path(cwd_arc).parents
                                       if str(p) != ".")]))
    return FluxContents(files, tuple(dirs), yaml, cwd_arc, config_arc, includes)


def _python_sources(flux: FluxTopology, yaml_dir: Path) -> list[Path]:
    """What ``module:Class`` components import from the project, looked up as the builder
    imports them: the whole ``src/`` when the module is there (it may import its
    neighbours), else the module beside the YAML file (``NAME.py`` or the package
    ``NAME/``). A module in neither place is an installed one, which every node has."""
    out: list[Path] = []
    for component in flux.components:
        if component.kind != "python" or not component.class_path:
            continue
        top = component.class_path.partition(":")[0].split(".")[0]
        src = yaml_dir / "src"
        if (src / f"{top}.py").is_file() or (src / top).is_dir():
            found = src
        elif (yaml_dir / f"{top}.py").is_file():
            found = yaml_dir / f"{top}.py"
        elif (yaml_dir / top).is_dir():
            found = yaml_dir / top
        else:
            continue
        if found not in out:
            out.append(found)
    return out


def definition_contents(definition: Path | str,
                        config_file: Path | str | None = None) -> dict[str, Path]:
    """What the package of a heronpy definition (``NAME.defn``, kept by ``heron submit
    FILE.pex - ...``) holds: the definition and the pex copy it names beside it, plus
    the ``--config`` file as ``config/NAME``; archive name -> file. A definition whose
    code is directories of this machine (a ``.py`` file's import roots) is refused."""
    from heronpy.api.definition import load_document  # deferred: cloudpickle

    definition = Path(definition).resolve()
    files = {definition.name: definition}
    for entry in load_document(definition).get("sys_path") or []:
        file = definition.parent / entry
        if Path(entry).is_absolute() or not file.is_file():
            raise PackageError(f"{definition}: its code is {entry}, a directory of this "
                               f"machine that a cluster's nodes do not have; submit the "
                               f"topology as a pex (python -m zipapp)")
        _not_a_link(file)
        files[Path(entry).as_posix()] = file
    if config_file is not None:
        files[f"config/{Path(config_file).name}"] = Path(config_file).resolve()
    return files


def build_package(project: Path | str, manifest: dict[str, Any], out_dir: Path | str, *,
                  flux: FluxContents | None = None,
                  files: dict[str, Path] | None = None) -> Package:
    """Pack ``project`` (a streamparse project directory) with ``manifest`` into
    ``out_dir/<topology>.tar.gz``; written under a temporary name and renamed, so a
    package is complete or absent. ``flux``: a Flux topology's files instead of the
    project's (:func:`flux_contents`), recorded in the manifest's ``flux``; ``files``:
    these files (archive name -> file) instead (:func:`definition_contents`)."""
    root = Path(project).resolve()
    entries: list[tuple[str, Path]]
    dirs: tuple[str, ...]
    if files is not None:
        entries, dirs = list(files.items()), ()
    elif flux is None:
        if not root.is_dir():
            raise PackageError(f"{root}: a cluster package is built from a project directory "
                               f"(topologies/, src/, config.json)")
        if not (root / "topologies").is_dir():
            raise PackageError(f"{root}: no topologies/ folder; nothing to pack")
        entries = [(file.relative_to(root).as_posix(), file) for file in _project_files(root)]
        dirs = ()
    else:
        entries, dirs = list(flux.files.items()), flux.dirs
        manifest = {**manifest, "flux": {"yaml": flux.yaml, "cwd": flux.cwd,
                                         "includes": dict(flux.includes or {})}}
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
            for arcname in dirs:
                info = tarfile.TarInfo(arcname)
                info.type, info.mode = tarfile.DIRTYPE, 0o700
                tar.addfile(info)
            for arcname, file in entries:
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
