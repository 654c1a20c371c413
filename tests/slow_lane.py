"""Which tests belong to the slow lane, decided from the code, not by hand.

A test is ``slow`` when it starts engine processes, servers or clusters. That is read
three ways, with no import executed:

- **by folder**: everything under ``tests/e2e`` and ``tests/cluster`` runs real
  topologies or a Slurm cluster;
- **by fixture**: a fixture in the test's closure is one of :data:`SERVER_FIXTURES`
  (ZooKeeper, Spark, Slurm, a ``HERON_HOME`` whose CLI commands start processes), is
  asked for by name (``request.getfixturevalue``), or itself starts a process;
- **by what it calls**: the test function, or a fixture of it, reaches (through the
  functions and classes of its own module, and of the ``tests`` helper modules it takes
  names from) a name that starts a process: ``subprocess``, ``multiprocessing``,
  ``sys.executable``, or one of the project's process-starting entry points
  (:data:`PROCESS_MODULES`).

A ``pytest.mark.slow`` written by hand still counts; nothing else is needed, so a new
test that starts a process lands in the slow lane without anyone remembering a marker.
"""

from __future__ import annotations

import ast
import inspect
from functools import cache
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: Folders whose every test runs real topologies or clusters.
SLOW_FOLDERS = ("e2e", "cluster")

#: Fixtures that start a server, a cluster, or make CLI commands start engine processes.
SERVER_FIXTURES = frozenset({
    "zookeeper", "spark", "spark_cluster", "slurm_cluster", "slurm_zookeeper",
    "running_slurm_cluster", "heron_home", "real_engine", "local_topology",
    "redis_server", "redis_url",
})

#: Modules whose names, once used, start processes or servers.
PROCESS_MODULES = (
    "subprocess", "multiprocessing", "concurrent.futures.process",
    "engine.common.process.spawn", "engine.common.process.supervisor", "engine.common.local_run",
    "engine.scheduler", "engine.executor", "engine.tools.cli.main", "engine.entry",
    "engine.submitter", "engine.healthmgr.main", "compat.spark_session",
    "compat.summingbird.platforms.batch", "conformance.engines", "conformance.runner",
    "conformance.cli", "conformance.spark_cluster", "conformance.diff",
    "tests.zookeeper_server", "tests.slurm", "tests.browser", "tests.redis_server",
)

#: Attribute uses that start processes whatever module they come from.
PROCESS_ATTRIBUTES = frozenset({("sys", "executable"), ("os", "fork"), ("os", "execv"),
                                ("os", "posix_spawn"), ("pty", "fork")})


def _starts_processes(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in PROCESS_MODULES)


class _ModuleIndex:
    """One source file: its top-level definitions, the names each uses, and where its
    imported names come from."""

    def __init__(self, path: Path) -> None:
        tree = ast.parse(path.read_text(), filename=str(path))
        self.path = path
        self.origins: dict[str, str] = {}
        self.uses: dict[str, set[str]] = {}
        self.direct: dict[str, bool] = {}
        package = ".".join(path.relative_to(TESTS.parent).with_suffix("").parts[:-1])
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.origins[(alias.asname or alias.name).split(".")[0]] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                for alias in node.names:
                    self.origins[alias.asname or alias.name] = f"{base}.{alias.name}"
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._index(node.name, node)
                if isinstance(node, ast.ClassDef):
                    for member in node.body:
                        if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self._index(f"{node.name}.{member.name}", member)
        self.module_uses = self._names(tree)

    def _names(self, node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
            n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}

    def _index(self, name: str, node: ast.AST) -> None:
        names = self._names(node)
        self.uses[name] = names
        attributes = {(n.value.id, n.attr) for n in ast.walk(node)
                      if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
        requested = {n.args[0].value for n in ast.walk(node)
                     if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                     and n.func.attr == "getfixturevalue" and n.args
                     and isinstance(n.args[0], ast.Constant)}
        self.direct[name] = bool(attributes & PROCESS_ATTRIBUTES) or bool(
            requested & SERVER_FIXTURES) or any(
            _starts_processes(self.origins[n]) for n in names if n in self.origins)


@cache
def _index(path: str) -> _ModuleIndex | None:
    try:
        return _ModuleIndex(Path(path))
    except (OSError, SyntaxError, ValueError):
        return None


def _helper_path(origin: str) -> Path | None:
    """The file of a ``tests.*`` helper a name was imported from, if there is one."""
    if not origin.startswith("tests."):
        return None
    parts = origin.split(".")
    for cut in (len(parts) - 1, len(parts)):
        candidate = TESTS.parent.joinpath(*parts[:cut]).with_suffix(".py")
        if candidate.is_file():
            return candidate
    return None


@cache
def _reaches_process(path: str, name: str, depth: int = 0) -> bool:
    """Whether definition ``name`` of ``path`` starts a process, directly or through the
    definitions it uses in its own file and in the ``tests`` helpers it imports."""
    index = _index(path)
    if index is None or name not in index.uses or depth > 6:
        return False
    if index.direct[name]:
        return True
    seen = {name}
    frontier = [name]
    while frontier:
        current = frontier.pop()
        for used in index.uses.get(current, ()):
            local = [d for d in index.uses if d == used or d.startswith(used + ".")]
            for definition in local:
                if definition in seen:
                    continue
                seen.add(definition)
                if index.direct[definition]:
                    return True
                frontier.append(definition)
            origin = index.origins.get(used)
            helper = _helper_path(origin) if origin else None
            if helper is not None and _reaches_process(str(helper), origin.rsplit(".", 1)[1],
                                                       depth + 1):
                return True
    return False


def _function_starts_processes(func: object) -> bool:
    func = inspect.unwrap(func)  # type: ignore[arg-type]
    try:
        path = inspect.getsourcefile(func)  # type: ignore[arg-type]
    except TypeError:
        return False
    if not path or not Path(path).is_relative_to(TESTS):
        return False
    qualname = getattr(func, "__qualname__", "").replace(".<locals>", "")
    return _reaches_process(path, qualname)


def is_slow(item: pytest.Item) -> bool:
    """Whether ``item`` starts engine processes, servers or clusters (see module doc)."""
    if item.get_closest_marker("slow") is not None:
        return True
    path = Path(str(item.fspath))
    relative = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
    if relative and relative[0] in SLOW_FOLDERS:
        return True
    info = getattr(item, "_fixtureinfo", None)
    closure = set(info.names_closure) if info is not None else set()
    if closure & SERVER_FIXTURES:
        return True
    if isinstance(item, pytest.Function) and _function_starts_processes(item.function):
        return True
    if info is not None:
        for name in closure:
            for definition in info.name2fixturedefs.get(name, ()):
                if _function_starts_processes(definition.func):
                    return True
    return False
