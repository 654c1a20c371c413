"""Generated wrapper projects: the user's topology, rebuilt with one part swapped.

The ``heron`` engine starts every task in a process of its own, which rebuilds the
topology from the submitted project. So the harness cannot patch a class in its own
process to change what a run does (replace a spout with a fixture, bound it, kill a bolt
at its N-th tuple); it writes a small project whose topology file imports the user's
topology and rebuilds it. Both :mod:`conformance.fixture_spout` and
:mod:`conformance.kill_wrapper` do this through the two functions here.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from engine.common.plan.discovery import is_topology_class

#: what the wrapper links to rather than copies: the user's code and settings
_SHARED = ("src", "config.json", "heron.yaml")


def load_original_topology(path: Path, module_prefix: str, error: type[Exception]) -> type:
    """Import the user's topology file under a module name of its own (the generated
    file keeps the user's stem, which is the topology's name, so the names must differ),
    with its project's ``src`` and ``topologies`` on ``sys.path`` as the engines' loader
    and sparse put them. Failures raise ``error`` naming the file."""
    path = Path(path).resolve()
    for entry in (str(path.parent.parent / "src"), str(path.parent)):
        if entry not in sys.path:
            sys.path.append(entry)
    name = module_prefix + path.stem
    module = sys.modules.get(name)
    if module is None or getattr(module, "__file__", None) != str(path):
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise error(f"{path} cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(name, None)
            raise error(f"importing {path} failed: {type(exc).__name__}: {exc}") from exc
    for value in vars(module).values():
        if is_topology_class(value):
            return value
    raise error(f"{path} defines no Topology subclass")


def write_wrapper_project(project: Path, topology_file: Path, out: Path, text: str) -> Path:
    """Write a project into ``out`` (which must not exist) whose topology file is ``text``
    and whose ``src``, ``config.json`` and ``heron.yaml`` are symbolic links to the user's.

    The topology file sits where the original sits relative to its project (so it keeps
    its name), or in ``topologies/`` when the original is outside the project."""
    project, topology_file = Path(project).resolve(), Path(topology_file).resolve()
    try:
        relative = topology_file.relative_to(project)
    except ValueError:
        relative = Path("topologies") / topology_file.name
    out = Path(out)
    target = out / relative
    target.parent.mkdir(parents=True, exist_ok=False)
    for name in _SHARED:
        if (project / name).exists():
            os.symlink(project / name, out / name)
    target.write_text(text, encoding="utf-8")
    return out
