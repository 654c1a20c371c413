"""From what a user types (a project path, ``-n``, ``-e``, ``-o``...) to a compiled,
validated topology ready for either engine. The CLI and the conformance suite share it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compat.flux.paths import is_flux_file
from compat.flux.paths import shell_dir_of as flux_shell_dir
from compat.storm_api.project import Project, load_project, resolve_options
from engine.common.plan.compiler import compile_topology
from engine.common.plan.config_check import check_runtime_config
from engine.common.plan.discovery import load_topology_class

if TYPE_CHECKING:
    from compat.flux.topology import FluxTopology


@dataclass
class LoadedTopology:
    project: Project
    topology_file: Path
    env: str | None
    env_settings: dict[str, Any]
    compiled: Any  # engine.common.plan.compiler.CompiledTopology
    notes: list[str] = field(default_factory=list)
    #: the Flux topology, when the topology file is a Flux YAML file
    flux: FluxTopology | None = None

    @property
    def plan(self) -> Any:
        return self.compiled.plan

    @property
    def shell_dir(self) -> Path:
        """Where shell components start: a project's ``src/``, a Flux file's
        ``resources/`` (or its directory). Every engine and launcher reads it here."""
        return self.flux.shell_dir if self.flux is not None else shell_dir_of(self.project.root)


def shell_dir_of(project: Path | str) -> Path:
    """The shell components' directory of a submission's ``project`` (a streamparse
    project directory, a topology file inside one, or a Flux file), for the processes
    that have the submission but not the loaded topology (a cluster node)."""
    path = Path(project)
    if is_flux_file(path):
        return flux_shell_dir(path)
    root = path.parent.parent if path.suffix == ".py" else path
    return root / "src"


def load_topology(path: Path | str, *, name: str | None = None, env: str | None = None,
                  config_file: Path | str | None = None,
                  cli_options: Mapping[str, Any] | None = None, ackers: int | None = None,
                  workers: int | None = None, debug: bool = False,
                  filter_file: Path | str | None = None, env_filter: bool = False,
                  flux_values: Mapping[str, str] | None = None,
                  flux_cwd: Path | str | None = None) -> LoadedTopology:
    """Load, merge options for and compile the topology ``name`` of the project at ``path``.

    ``path`` may also be a topology file, whose stem is then the name, or a Flux file
    (``.yaml``/``.yml``), read with ``--filter`` (``filter_file``) and ``--env-filter``, or
    with the substitution values a submission recorded (``flux_values``, ``flux_cwd``);
    its ``name`` is the topology's unless ``name`` is given.
    """
    path = Path(path)
    if is_flux_file(path):
        return _load_flux(path, name=name, env=env, config_file=config_file,
                          cli_options=cli_options, ackers=ackers, workers=workers, debug=debug,
                          filter_file=filter_file, env_filter=env_filter,
                          flux_values=flux_values, flux_cwd=flux_cwd)
    if filter_file is not None or env_filter:
        from compat.storm_api.project import ProjectError

        raise ProjectError(f"{path}: --filter and --env-filter go with a Flux file "
                           "(TOPOLOGY.yaml), not a streamparse project")
    if path.is_file() and name is None:
        name = path.stem
    project = load_project(path, config_file)
    if lone_file(path, project):
        # a topology file outside a project's topologies/, or a heronpy definition
        # (NAME.defn): its project is its own directory
        project = load_project(path.parent, config_file)
        topology_file = path.resolve()
    else:
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


def lone_file(path: Path, project: Project) -> bool:
    """A topology file that is not in its project's ``topologies/`` directory (Heron's
    examples live at ``examples/src/python/*.py``), or a heronpy definition file."""
    if not path.is_file():
        return False
    if path.suffix == ".defn":
        return True
    return (path.suffix == ".py"
            and (project.topology_dir / path.name).resolve() != path.resolve())


def _load_flux(path: Path, *, name: str | None, env: str | None,
               config_file: Path | str | None, cli_options: Mapping[str, Any] | None,
               ackers: int | None, workers: int | None, debug: bool,
               filter_file: Path | str | None, env_filter: bool,
               flux_values: Mapping[str, str] | None,
               flux_cwd: Path | str | None) -> LoadedTopology:
    """A Flux file: its ``config`` stands where a Topology's ``config`` does (options
    merge env options < the Flux config < the command line), and its project is its
    directory (a ``config.json``/``heron.yaml`` there is read as a project's)."""
    # the Flux reader is imported only for a Flux file (see compat/flux/__init__.py)
    from compat.flux.reader import read_flux

    flux = read_flux(path, filter_file=filter_file, env_filter=env_filter,
                     values=flux_values, cwd=flux_cwd)
    project = load_project(path, config_file)
    env_name, settings = project.environment(env)
    topology_cls = flux.topology_class()
    options = resolve_options(settings, flux.config, dict(cli_options or {}), ackers=ackers,
                              workers=workers, debug=debug)
    compiled = compile_topology(topology_cls, name=name or flux.name, env=env_name,
                                config=options)
    plan = compiled.plan
    check_runtime_config(plan.config, {c.name: c.config for c in plan.components.values()})
    return LoadedTopology(project, flux.path, env_name, dict(settings), compiled,
                          [*project.notes, *flux.warnings,
                           *overridden_options(cli_options or {}, plan)], flux=flux)


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

