"""The import graph points one way (DESIGN "Layout", docs/architecture.md).

``compat/`` is the API users import: it imports nothing from ``engine/`` or
``conformance/``, except Summingbird's streaming platform, which (as Summingbird's own
``summingbird-storm`` does) runs on an engine through the engines' public entry points,
and the API's config and exceptions modules, which re-export the keys, readers and
errors the engine owns (``engine/config/``, ``engine/common/runtime/errors.py``). The engine
imports from ``compat/`` only the user API's own types (an explicit list below), never
its configuration, and never a name the API only re-exports from the engine. Nothing in
``engine/`` imports ``conformance/``, and no two modules import each other in a circle.
``heronpy/`` (Heron's Python API, a layer over ``compat.storm_api``) imports only that and
the engine's protobufs, ``compat/`` never imports it, and it is layered inside as Heron's
is: ``api`` lowest, the Streamlet API on it, its connectors on that; the Streamlet API's
stages never import the operators that make them.
The graph is read from the source with ``ast``; nothing is imported.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("compat", "engine", "conformance", "migrate", "heronpy")

#: The only modules of ``compat`` allowed to import an engine: Summingbird's platform
#: that plans a job into a topology and runs it on either engine.
ENGINE_PLATFORMS = ("compat.summingbird.platforms.streaming",)

#: What those platforms may import from the engines: their public entry points.
ENGINE_ENTRY_POINTS = ("engine.entry",)

#: The API modules that re-export names the engine owns, and what they may import: the
#: Storm API's config keys and readers are the engine's runtime configuration, and the
#: runtime errors' base and ``ComponentFailure`` the engine's own errors.
ENGINE_OWNED_REEXPORTS = {"compat.storm_api.config": ("engine.config",),
                          "compat.storm_api.exceptions": ("engine.common.runtime.errors",)}

#: The only API modules the engine may import: the user API's own types, which the engine
#: hosts, calls and catches (a component, its tuples, collector and state, the project and
#: topology files a user writes, the errors user code raises). Its runtime configuration is
#: ``engine.config``, not ``compat.storm_api.config``.
ENGINE_MAY_IMPORT_FROM_API = (
    "compat.storm_api.state",        # State, HashMapState, KeyedState, StatefulComponent
    "compat.storm_api.tuple",        # Tuple
    "compat.storm_api.component",    # a component's identity, not_a_tuple
    "compat.storm_api.collector",    # OutputCollector
    "compat.storm_api.updatable",    # Updatable (Heron's topology update hook)
    "compat.storm_api.exceptions",   # StormWentAwayError: the API's wire ended
    "compat.storm_api.hosting",      # how the API runs a component in-process
    "compat.storm_api.project",      # a streamparse project as the user wrote it
    "compat.storm_api.dsl.errors",   # a topology definition the user wrote wrong
    "compat.flux",                   # a Flux YAML topology as the user wrote it
)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _targets(module: str, path: Path, node: ast.AST, known: dict[str, Path]) -> list[str]:
    """The project modules an import statement names (the deepest that exists)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        assert isinstance(node, ast.ImportFrom)
        base = node.module or ""
        if node.level:
            parts = module.split(".")
            if path.name != "__init__.py":
                parts = parts[:-1]
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join([*parts, base] if base else parts)
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                 for alias in node.names]
    resolved = []
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            resolved.append(name)
    return resolved


def _edges() -> list[tuple[str, str, str]]:
    """(importer, imported, "file:line") for every import of one project module by another."""
    known = _modules()
    edges = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                where = f"{path.relative_to(REPO)}:{node.lineno}"
                for target in _targets(module, path, node, known):
                    if target != module:
                        edges.append((module, target, where))
    return edges


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _layer(module: str) -> str:
    return module.split(".")[0]


def test_the_api_imports_no_engine_and_no_conformance_suite():
    wrong = []
    for importer, imported, where in _edges():
        if _layer(importer) != "compat" or _layer(imported) not in ("engine", "conformance"):
            continue
        if (_within(importer, ENGINE_PLATFORMS) and _within(imported, ENGINE_ENTRY_POINTS)):
            continue
        if _within(imported, ENGINE_OWNED_REEXPORTS.get(importer, ())):
            continue
        wrong.append(f"{where}: {importer} imports {imported}")
    assert not wrong, "the API (compat/) reaches into an engine or the suite:\n" + "\n".join(wrong)


def test_the_engine_imports_from_the_api_only_the_user_apis_own_types():
    wrong = sorted({f"{where}: {importer} imports {imported} (the engine reads its configuration "
                    f"from engine.config; the API modules it may import: "
                    f"ENGINE_MAY_IMPORT_FROM_API in tests/test_layers.py)"
                    for importer, imported, where in _edges()
                    if _layer(importer) == "engine" and _layer(imported) == "compat"
                    and not _within(imported, ENGINE_MAY_IMPORT_FROM_API)})
    assert not wrong, "engine/ imports the API beyond its user types:\n" + "\n".join(wrong)


def _reexported_from_engine() -> dict[str, set[str]]:
    """API module -> the names it imports from the engine (to re-export them)."""
    known = _modules()
    found: dict[str, set[str]] = {}
    for module in ENGINE_OWNED_REEXPORTS:
        tree = ast.parse(known[module].read_text())
        found[module] = {alias.asname or alias.name for node in ast.walk(tree)
                         if isinstance(node, ast.ImportFrom)
                         and _layer(node.module or "") == "engine" for alias in node.names}
    return found


def test_the_engine_imports_its_own_names_from_itself_not_from_the_apis_reexports():
    reexported = _reexported_from_engine()
    known = _modules()
    wrong = []
    for module, path in known.items():
        if _layer(module) != "engine":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in reexported:
                for alias in node.names:
                    if alias.name in reexported[node.module]:
                        wrong.append(f"{path.relative_to(REPO)}:{node.lineno}: {module} imports "
                                     f"{alias.name} from {node.module}, which re-exports the "
                                     "engine's own")
    assert reexported["compat.storm_api.exceptions"] >= {"ComponentFailure", "StormApiError"}
    assert not wrong, "\n".join(wrong)


#: Where hand-written code lives, and its limit (DESIGN: small modules with one job).
HAND_WRITTEN = ("compat", "engine", "heronpy", "migrate", "conformance", "bench", "scripts",
                "tests")
MAX_LINES = 600
#: Python, Cython, and the web page's own scripts, stylesheets and HTML (engine/tools/ui/static/)
CODE_SUFFIXES = (".py", ".pyx", ".pxd", ".pxi", ".js", ".css", ".html")


def _generated(path: Path) -> bool:
    """protobuf's generated code, and vendored minified web libraries (uPlot's *.min.js,
    *.min.css): not written here, so not split here."""
    return (path.stem.endswith(("_pb2", "_pb2_grpc")) or "__pycache__" in path.parts
            or ".min." in path.name)


def test_no_hand_written_module_is_over_600_lines():
    """Python and Cython alike (.py, .pyx, .pxd, .pxi), and the page's .js, .css and .html;
    protobuf's generated code and the vendored uPlot aside."""
    over, seen = [], set()
    for top in HAND_WRITTEN:
        for path in sorted((REPO / top).rglob("*")):
            if path.suffix in CODE_SUFFIXES and path.is_file() and not _generated(path):
                seen.add(path.suffix)
                lines = len(path.read_text(errors="replace").splitlines())
                if lines > MAX_LINES:
                    over.append(f"{path.relative_to(REPO)}: {lines} lines")
    assert {".py", ".pyx", ".js", ".css", ".html"} <= seen, seen  # the walk found them all
    assert not over, f"modules over {MAX_LINES} lines (split them by job):\n" + "\n".join(over)


def test_the_engine_never_imports_the_conformance_suite():
    wrong = [f"{where}: {importer} imports {imported}" for importer, imported, where in _edges()
             if _layer(importer) == "engine" and _layer(imported) == "conformance"]
    assert not wrong, "engine/ imports its own test harness:\n" + "\n".join(wrong)


def test_nothing_imports_the_migrator_or_the_suite_but_themselves():
    wrong = [f"{where}: {importer} imports {imported}" for importer, imported, where in _edges()
             if _layer(imported) in ("conformance", "migrate")
             and _layer(importer) in ("compat", "engine")]
    assert not wrong, "\n".join(wrong)


def _circles(edges: list[tuple[str, str, str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for importer, imported, _ in edges:
        graph[importer].add(imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for root in sorted(set(graph) | {b for _, b, _ in edges}):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_modules_import_each_other_in_a_circle():
    edges = _edges()
    circles = _circles(edges)
    lines = []
    for circle in circles:
        members = set(circle)
        ties = sorted({f"  {where}: {a} -> {b}" for a, b, where in edges
                       if a in members and b in members})
        lines.append(" <-> ".join(circle) + "\n" + "\n".join(ties))
    assert not circles, "modules that import each other in a circle:\n" + "\n".join(lines)


def test_the_walker_sees_a_circle_and_an_import_that_runs_back_up():
    """The checks above would pass on an empty graph: prove the walker reads real edges."""
    edges = _edges()
    assert any(a.startswith("engine.") and b.startswith("compat.storm_api") for a, b, _ in edges)
    assert any(a.startswith("heronpy.streamlet.") and b.startswith("heronpy.api.")
               for a, b, _ in edges)
    assert _circles([("a", "b", "x"), ("b", "c", "y"), ("c", "a", "z"), ("c", "d", "w")]) == [
        ["a", "b", "c"]]


#: heronpy's packages, lowest first (Heron's own order): the API of spouts, bolts and
#: topologies; the Streamlet API planned onto it; the Streamlet API's connectors. A package
#: imports only itself and the packages below it.
HERONPY_LAYERS = ("heronpy.api", "heronpy.streamlet", "heronpy.connectors")

#: The Streamlet API's stages and their spouts and bolts (``heronpy.streamlet.impl``) sit
#: below the operators that make them (``Streamlet``) and the planning that walks them
#: (``Builder``, ``Runner``): the graph's node they know is ``impl.stage.StreamletNode``.
STREAMLET_STAGES = ("heronpy.streamlet.impl",)
STREAMLET_ABOVE_THE_STAGES = ("heronpy.streamlet.streamlet", "heronpy.streamlet.builder",
                              "heronpy.streamlet.runner")


def _heronpy_layer(module: str) -> int | None:
    for rank, package in enumerate(HERONPY_LAYERS):
        if _within(module, (package,)):
            return rank
    return None


def test_heronpys_packages_import_only_their_own_layer_and_below():
    """``heronpy.api`` imports neither the Streamlet API nor its connectors, and the
    Streamlet API does not import its connectors: each layer is usable without those above."""
    wrong = []
    for importer, imported, where in _edges():
        low, high = _heronpy_layer(imported), _heronpy_layer(importer)
        if low is not None and high is not None and low > high:
            wrong.append(f"{where}: {importer} imports {imported} ({HERONPY_LAYERS[low]} is "
                         f"above {HERONPY_LAYERS[high]}: HERONPY_LAYERS in tests/test_layers.py)")
    assert not wrong, "heronpy's packages import upwards:\n" + "\n".join(wrong)


def test_the_streamlet_stages_never_import_the_operators_that_make_them():
    wrong = sorted({f"{where}: {importer} imports {imported} (a stage knows its parents as "
                    "heronpy.streamlet.impl.stage.StreamletNode)"
                    for importer, imported, where in _edges()
                    if _within(importer, STREAMLET_STAGES)
                    and _within(imported, STREAMLET_ABOVE_THE_STAGES)})
    assert not wrong, "\n".join(wrong)


#: What heronpy stands on outside itself: the Storm API it is a thin layer over, and the
#: engine's protobufs (``HeronComponentSpec.get_protobuf()`` answers Heron's
#: ``topology_pb2`` messages, as Heron's heronpy imports Heron's proto).
HERONPY_STANDS_ON = ("compat", "engine.messages")


def test_heronpy_stands_on_the_storm_api_and_the_api_never_on_heronpy():
    """heronpy is an API as ``compat/`` is: it imports no engine's runtime, suite or
    migrator (only the protobufs), and the Storm API under it never imports it back."""
    wrong = sorted({f"{where}: {importer} imports {imported}"
                    for importer, imported, where in _edges()
                    if (_layer(importer) == "heronpy" and _layer(imported) != "heronpy"
                        and not _within(imported, HERONPY_STANDS_ON))
                    or (_layer(importer) == "compat" and _layer(imported) == "heronpy")})
    assert not wrong, ("heronpy reaches past the Storm API and the protobufs, or the "
                       "Storm API imports heronpy:\n" + "\n".join(wrong))


def test_the_heronpy_layer_checks_see_heronpys_edges():
    """The two checks above would pass on a graph without heronpy: prove it is read, and
    that each layer really stands on the one below."""
    pairs = {(_heronpy_layer(a), _heronpy_layer(b)) for a, b, _ in _edges()}
    assert {(1, 0), (2, 1)} <= pairs
    assert any(_layer(a) == "heronpy" and _within(b, ("engine.messages",))
               for a, b, _ in _edges())
    assert any(_within(a, STREAMLET_ABOVE_THE_STAGES) and _within(b, STREAMLET_STAGES)
               for a, b, _ in _edges())


#: The groups of ``engine/`` whose folders are each a role of their own: the tools
#: (``engine/tools/cli``, ``tracker``, ``ui``) and the shared libraries
#: (``engine/common/network``, ``codec``, ``launch.py``...).
ENGINE_GROUPS = ("engine.tools", "engine.common")


def _role(module: str) -> str:
    """The folder (Heron role) or top-level module of ``engine`` a module belongs to
    (inside ``engine/tools`` and ``engine/common``, the folder or module there),
    ``compat`` and the other layers as one each."""
    parts = module.split(".")
    if parts[0] != "engine" or len(parts) == 1:
        return parts[0]
    depth = 3 if ".".join(parts[:2]) in ENGINE_GROUPS and len(parts) > 2 else 2
    return ".".join(parts[:depth])


def test_no_two_roles_of_the_engine_import_each_other():
    """Folder by folder (the Stream Manager, the executor, the scheduler...), the engine
    is layered too: a role that imports another is never imported back by it, through
    any chain. The API's one way into the engines (``engine.entry``) is left out: it is
    the door Summingbird's engine platforms use, and runs only down from there."""
    edges = [(_role(a), _role(b), where) for a, b, where in _edges()
             if _role(a) != _role(b)
             and not (_within(a, ENGINE_PLATFORMS) and _within(b, ENGINE_ENTRY_POINTS))]
    circles = _circles(edges)
    lines = []
    for circle in circles:
        members = set(circle)
        ties = sorted({f"  {where}: {a} -> {b}" for a, b, where in edges
                       if a in members and b in members})
        lines.append(" <-> ".join(circle) + "\n" + "\n".join(ties[:12]))
    assert not circles, "engine roles that import each other:\n" + "\n".join(lines)


#: What ``engine/``'s top level holds, as Heron's ``heron/`` does (docs/architecture.md).
#: A new folder belongs in one of these; the message says which.
ENGINE_TOP_LEVEL = {
    # the roles: one process kind each
    "instance": "role", "stmgr": "role", "tmanager": "role", "metricsmgr": "role",
    "healthmgr": "role", "executor": "role", "shell": "role",
    # the reference engine (the ``storm`` engine of ``heron run --engine storm``)
    "storm": "reference engine",
    # the plug-ins, each behind an interface of engine/spi
    "scheduler": "plug-in", "statemgr": "plug-in", "statefulstorage": "plug-in",
    "packing": "plug-in", "uploader": "plug-in",
    # Heron's scheduler-core: the one submit path and runtime manager (kill, restart,
    # update), which the CLI, the Health Manager's scaling and the Tracker use
    "submitter": "scheduler-core",
    # the interfaces, the runtime configuration, the protobufs
    "spi": "interfaces", "config": "configuration", "messages": "protobufs",
    # what a user runs (engine/tools) and the libraries everything shares (engine/common)
    "tools": "tools", "common": "libraries",
    # the engines' public entry points (ENGINE_ENTRY_POINTS)
    "entry.py": "entry points", "__init__.py": "package",
}

#: Generated or built files that may sit anywhere and are not part of the layout.
_NOT_LAYOUT = ("__pycache__",)


def test_the_engines_top_level_reads_like_herons():
    """A newcomer finds a role, a plug-in, a tool or a library in one guess: the top level
    holds only the roles, the plug-ins, ``tools/``, ``common/``, ``spi/``, ``config/``,
    ``messages/``, ``storm/`` and ``entry.py``."""
    stray = sorted(entry.name for entry in (REPO / "engine").iterdir()
                   if entry.name not in ENGINE_TOP_LEVEL and entry.name not in _NOT_LAYOUT)
    assert not stray, (
        "engine/ has entries outside its layout: " + ", ".join(stray) + ". A process kind is "
        "a role (add it to ENGINE_TOP_LEVEL in tests/test_layers.py), a plug-in implements "
        "an engine/spi interface, a command a user runs or a service outside the topology "
        "goes under engine/tools/, and a library two roles or tools share goes under "
        "engine/common/ (docs/architecture.md).")
    assert (REPO / "engine" / "tools" / "cli").is_dir()
    assert (REPO / "engine" / "common" / "codec").is_dir()


#: The folders a tuple passes through from a spout's ``emit`` to a bolt's ``process``:
#: every module there holds code that runs, never only a re-export of another's names.
TUPLE_PATH = ("engine/instance", "engine/stmgr", "engine/common/codec")


def _is_docstring(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _only_reexports(tree: ast.Module) -> bool:
    """The module's body is imports and ``__all__`` only (a docstring and
    ``from __future__`` aside), and it imports something: an alias of other modules."""
    body = [node for node in tree.body if not _is_docstring(node)
            and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
    imports = [node for node in body if isinstance(node, (ast.Import, ast.ImportFrom))]

    def declares_all(node: ast.stmt) -> bool:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign))
                   else [])
        return bool(targets) and all(isinstance(target, ast.Name) and target.id == "__all__"
                                     for target in targets)

    return bool(imports) and all(isinstance(node, (ast.Import, ast.ImportFrom))
                                 or declares_all(node) for node in body)


def _says_why(tree: ast.Module) -> bool:
    return bool(tree.body) and _is_docstring(tree.body[0])


def test_no_alias_module_on_the_tuple_path():
    """A tuple walks through code that runs, not through modules that only re-export it
    (issue 41): a package's ``__init__.py`` may gather its names, if its docstring says
    why."""
    aliases = []
    for folder in TUPLE_PATH:
        for path in sorted((REPO / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            if not _only_reexports(tree):
                continue
            if path.name == "__init__.py" and _says_why(tree):
                continue
            aliases.append(f"{path.relative_to(REPO)}: only re-exports (import the module "
                           "that holds the code instead, and remove this one)")
    assert not aliases, "alias modules on the tuple path:\n" + "\n".join(aliases)


def test_the_alias_check_sees_an_alias():
    """The check above would pass if it never recognised one: prove it does."""
    alias = ast.parse('"""Old name."""\nfrom __future__ import annotations\n'
                      "from engine.stmgr.acking import Acker\n__all__ = ['Acker']\n")
    code = ast.parse("from engine.stmgr.acking import Acker\n\n\ndef f():\n    return Acker\n")
    empty = ast.parse('"""A package."""\n')
    assert _only_reexports(alias)
    assert not _only_reexports(code)
    assert not _only_reexports(empty)
