"""Find the Topology class in a topology file, the way ``sparse`` does.

streamparse's ``get_topology_from_file`` appends ``<dir>/../src`` and ``<dir>`` to
``sys.path`` (``src/`` is a project's import root, so topology files can write
``from bolts.wordcount import WordCountBolt``), imports the module by file stem and
takes the first Topology subclass in it. This does the same, with two differences
that only matter when something is wrong: the module is loaded from exactly the
given file (streamparse would import whatever module of that name comes first on
``sys.path``), and failures are ``TopologyLoadError``s that name the file and line.

heronpy topologies are taken too (docs/heronpy.md): a ``heronpy.api.topology.Topology``
subclass like any other, and a heronpy builder script (Heron's examples build their
topology in ``if __name__ == '__main__'`` with ``TopologyBuilder.build_and_submit()``),
which defines no class: such a file is run once more as ``__main__``, with
``sys.argv = [FILE, STEM]`` as Heron's CLI passes the topology name, and the class
``build_and_submit()`` builds is taken.

A file outside a project's ``topologies/`` (Heron keeps its examples at
``examples/src/python/word_count_topology.py``, importing ``examples.src.python.spout``
from the root its pex is built from) finds its imports as Heron's pex layout does: for
each top-level name the file imports absolutely, the nearest of the file's directory and
its parents that holds that name (a package directory or a module) is appended to
``sys.path`` (:func:`import_roots`). A topology definition (``NAME.defn``, written by
``Topology.write()`` when ``heron run|submit FILE - ARGS`` runs a main) is read by
``heronpy.api.definition`` instead of imported.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import runpy
import sys
import traceback
from pathlib import Path
from types import ModuleType, TracebackType

from .errors import NoTopologyClassError, TopologyFileNotFoundError, TopologyImportError

__all__ = ["import_roots", "is_topology_class", "load_topology_class"]

# Topology modules this loader imported, by module name. Loading another file with
# the same stem (another project's topologies/wordcount.py) replaces one of these,
# but never a module someone else imported under that name.
_LOADED: dict[str, ModuleType] = {}


def load_topology_class(path: Path | str) -> type:
    """Import the topology file at ``path`` and return its first Topology subclass."""
    path = Path(path)
    if not path.is_file():
        raise TopologyFileNotFoundError(
            f"topology file {path} does not exist. Give the path of a file under your "
            f"project's topologies/ directory (e.g. topologies/wordcount.py).",
            path=str(path),
        )
    resolved = path.resolve()
    if resolved.suffix == ".defn":
        return _read_definition(resolved, path)
    topology_dir = resolved.parent
    for entry in (str(topology_dir / ".." / "src"), str(topology_dir),
                  *map(str, import_roots(resolved))):
        if entry not in sys.path:
            sys.path.append(entry)
    module = _import_file(resolved, path)
    for value in list(vars(module).values()):
        if is_topology_class(value):
            return value
    if _uses_heronpy(module):
        return _run_heronpy_main(resolved, path)
    raise NoTopologyClassError(
        f"{path} defines no Topology subclass. Define one, e.g. "
        f"'class WordCount(Topology): ...' with 'from streamparse import Topology'.",
        path=str(path),
    )


def import_roots(path: Path) -> list[Path]:
    """The directories a lone topology file's absolute imports resolve from: for each
    top-level name it imports, the nearest of its directory and its parents holding
    ``NAME/`` or ``NAME.py`` (a name found nowhere is left to the installed packages)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return []  # the import itself reports it, with its line
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    roots: list[Path] = []
    for name in dict.fromkeys(names):
        if _installed(name):
            continue
        for directory in [path.parent, *path.parent.parents]:
            if (directory / name).is_dir() or (directory / f"{name}.py").is_file():
                if directory not in roots:
                    roots.append(directory)
                break
    return roots


def _installed(name: str) -> bool:
    """Whether ``name`` already imports as a module or regular package (a namespace
    package, a directory of that name somewhere on ``sys.path``, does not count)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin not in (None, "namespace")


def _read_definition(resolved: Path, shown: Path) -> type:
    """The topology class of a definition file (heronpy.api.definition)."""
    from heronpy.api.definition import DefinitionError, read_definition

    try:
        return read_definition(resolved)
    except DefinitionError as exc:
        raise TopologyImportError(str(exc), path=str(shown)) from None


def is_topology_class(value: object) -> bool:
    """A subclass of streamparse's or compat.storm_api's Topology, but not the base itself."""
    if not isinstance(value, type) or _is_base_topology(value):
        return False
    return type(value).__name__ == "TopologyType" or any(
        _is_base_topology(base) for base in value.__mro__[1:]
    )


def _is_base_topology(cls: type) -> bool:
    return cls.__name__ == "Topology" and (cls.__module__.endswith("dsl.topology")
                                           or cls.__module__ == "heronpy.api.topology")


def _uses_heronpy(module: ModuleType) -> bool:
    """Whether the module imported heronpy's API (a name or a module from it)."""
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", "")
        if isinstance(name, str) and name.startswith("heronpy."):
            return True
    return False


def _run_heronpy_main(resolved: Path, shown: Path) -> type:
    """Run a heronpy builder script as ``__main__`` and take the class it submits."""
    from heronpy.api.topology import capture_submissions

    saved_argv = sys.argv
    sys.argv = [str(resolved), resolved.stem]
    try:
        with capture_submissions() as built, contextlib.redirect_stdout(sys.stderr):
            runpy.run_path(str(resolved), run_name="__main__")
    except SystemExit as exc:
        raise TopologyImportError(
            f"{shown}: the topology's main exited ({exc.code!r}) before calling "
            f"build_and_submit()", path=str(shown)) from None
    except Exception as exc:
        raise TopologyImportError(
            f"{_error_location(exc, resolved)}: running topology file {shown} as __main__ "
            f"failed: {type(exc).__name__}: {exc}", path=str(shown)) from exc
    finally:
        sys.argv = saved_argv
    if not built:
        raise NoTopologyClassError(
            f"{shown} defines no Topology subclass and its main never called "
            f"build_and_submit(); define one or build it with heronpy's TopologyBuilder.",
            path=str(shown))
    return built[-1]


def _import_file(resolved: Path, shown: Path) -> ModuleType:
    name = resolved.stem
    existing = sys.modules.get(name)
    if existing is not None:
        existing_file = getattr(existing, "__file__", None)
        if existing_file and Path(existing_file).resolve() == resolved:
            return existing
        if _LOADED.get(name) is not existing:
            raise TopologyImportError(
                f"{shown}: the module name {name!r} (the file's stem, which sparse imports it "
                f"as) is already taken by {existing_file or existing!r}. Rename the topology file.",
                path=str(shown),
            )
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise TopologyImportError(f"{shown} cannot be imported as a Python module.",
                                  path=str(shown))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        if existing is not None:
            sys.modules[name] = existing
        else:
            sys.modules.pop(name, None)
        if not isinstance(exc, Exception):
            raise
        location = _error_location(exc, resolved)
        raise TopologyImportError(
            f"{location}: importing topology file {shown} failed: "
            f"{type(exc).__name__}: {exc}{_hint(exc)}",
            path=str(shown),
        ) from exc
    _LOADED[name] = module
    return module


def _error_location(exc: BaseException, topology_file: Path) -> str:
    """file:line of the error, preferring the project's own code over library frames."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = [f for f in _frames(exc.__traceback__) if not f.filename.startswith("<")]
    project = topology_file.parent.parent
    own = [f for f in frames if _is_under(Path(f.filename), project)]
    candidates = own or frames
    if not candidates:
        return str(topology_file)
    chosen = candidates[-1]
    return f"{chosen.filename}:{chosen.lineno}"


def _frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(tb)) if tb is not None else []


def _is_under(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
    except ValueError:
        return False
    return True


def _hint(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError):
        return (
            " (the project's src/ and topologies/ directories are on sys.path, as with sparse; "
            "is the module under src/ and installed dependencies present?)"
        )
    return ""
