"""From what a user types (a project path, ``-n``, ``-e``, ``-o``...) to a compiled,
validated topology ready for either engine. The CLI and the conformance suite share it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from compat.storm_api.project import Project, load_project, resolve_options
from engine.plan.compiler import compile_topology
from engine.plan.config_check import check_runtime_config
from engine.plan.discovery import load_topology_class


@dataclass
class LoadedTopology:
    project: Project
    topology_file: Path
    env: str | None
    env_settings: dict[str, Any]
    compiled: Any  # engine.plan.compiler.CompiledTopology
    notes: list[str] = field(default_factory=list)

    @property
    def plan(self) -> Any:
        return self.compiled.plan


def load_topology(path: Path | str, *, name: str | None = None, env: str | None = None,
                  config_file: Path | str | None = None,
                  cli_options: Mapping[str, Any] | None = None, ackers: int | None = None,
                  workers: int | None = None, debug: bool = False) -> LoadedTopology:
    """Load, merge options for and compile the topology ``name`` of the project at ``path``.

    ``path`` may also be a topology file, whose stem is then the name.
    """
    path = Path(path)
    if path.is_file() and name is None:
        name = path.stem
    project = load_project(path, config_file)
    topology_file = project.topology_file(name)
    env_name, settings = project.environment(env)
    topology_cls = load_topology_class(topology_file)
    options = resolve_options(settings, getattr(topology_cls, "config", None) or {},
                              dict(cli_options or {}), ackers=ackers, workers=workers,
                              debug=debug)
    compiled = compile_topology(topology_cls, name=topology_file.stem, env=env_name, config=options)
    plan = compiled.plan
    check_runtime_config(plan.config, {c.name: c.config for c in plan.components.values()})
    return LoadedTopology(project, topology_file, env_name, dict(settings), compiled,
                          [*project.notes, *overridden_options(cli_options or {}, plan)])


def overridden_options(cli_options: Mapping[str, Any], plan: Any) -> list[str]:
    """A note for each ``-o KEY=VALUE`` that a component's own config overrides: Storm's
    order (a component's config wins over the topology's) is kept, but a user who set a
    key on the command line must not be left to think it took effect everywhere."""
    notes = []
    for key, value in cli_options.items():
        for component in plan.components.values():
            own = component.config.get(key, value)
            if key in component.config and own != value:
                notes.append(f"note: -o {key}={value!r} does not reach component "
                             f"{component.name!r}: its own config sets {own!r}, and a "
                             "component's config wins over the topology's (Storm's order); "
                             "change it where the component is declared (spec(config=...))")
    return notes

