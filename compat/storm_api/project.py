"""Reading a streamparse project the way ``sparse`` reads it.

A project is a directory with ``topologies/`` (one Topology per file, the file stem is
the topology name), ``src/`` (the import root) and ``config.json`` (environments and
their options). Options merge lowest to highest: the environment's ``options``, then
``Topology.config``, then the command line (``-o``, ``-a``, ``-w``, ``-d``). Our own
optional ``heron.yaml`` holds the same per-environment options plus engine settings; when
both files exist ``heron.yaml`` is used (the CLI says so).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


class ProjectError(Exception):
    """The project cannot be read; the message names the file and what is wrong."""


@dataclass
class Project:
    root: Path
    config: dict[str, Any]
    config_file: Path | None
    notes: list[str] = field(default_factory=list)

    @property
    def topology_dir(self) -> Path:
        return self.root / str(self.config.get("topology_specs") or "topologies/")

    def topology_names(self) -> list[str]:
        if not self.topology_dir.is_dir():
            return []
        return sorted(p.stem for p in self.topology_dir.glob("*.py") if p.stem != "__init__")

    def topology_file(self, name: str | None) -> Path:
        """The file of topology ``name`` (``-n``); with one topology, ``name`` may be omitted."""
        names = self.topology_names()
        if not names:
            raise ProjectError(f"{self.topology_dir}: no topology files (*.py) found")
        if name is None:
            if len(names) > 1:
                raise ProjectError(
                    f"{self.root} has several topologies ({', '.join(names)}); "
                    "choose one with -n NAME"
                )
            name = names[0]
        path = self.topology_dir / f"{name}.py"
        if not path.is_file():
            raise ProjectError(
                f"unknown topology {name!r} (-n): no {path}; available: {', '.join(names)}")
        return path

    def environment(self, env: str | None) -> tuple[str | None, dict[str, Any]]:
        """The chosen environment's settings (``-e``); with one environment it is the default."""
        envs = self.config.get("envs") or {}
        if not isinstance(envs, dict):
            raise ProjectError(f"{self.config_file}: 'envs' must be an object")
        if env is None:
            if not envs:
                return None, {}
            if len(envs) == 1:
                env = next(iter(envs))
            elif "prod" in envs:
                env = "prod"
            else:
                raise ProjectError(
                    f"{self.config_file} defines several environments ({', '.join(envs)}); "
                    "choose one with -e ENV")
        if env not in envs:
            raise ProjectError(
                f"unknown environment {env!r} (-e); {self.config_file} defines: "
                f"{', '.join(envs) or 'none'}")
        settings = envs[env] or {}
        if not isinstance(settings, dict):
            raise ProjectError(f"{self.config_file}: envs.{env} must be an object")
        return env, settings


def load_project(path: Path | str, config_file: Path | str | None = None) -> Project:
    """Read the project at ``path`` (a project directory, a topology file inside one, or a
    Flux file, whose project is its own directory: a Flux topology lives beside its
    ``resources/`` and properties, not in a ``topologies/`` folder)."""
    root = Path(path).resolve()
    if root.is_file():
        # a topology file: its project is the parent of its topologies/ directory
        root = root.parent if root.suffix.lower() in (".yaml", ".yml") else root.parent.parent
    if not root.is_dir():
        raise ProjectError(f"{path}: no such project directory")
    notes: list[str] = []
    if config_file is not None:
        cfg_path = Path(config_file)
        if not cfg_path.is_file():
            raise ProjectError(f"{config_file}: no such config file (--config)")
    else:
        heron_yaml, config_json = root / "heron.yaml", root / "config.json"
        if heron_yaml.is_file():
            cfg_path = heron_yaml
            if config_json.is_file():
                notes.append(
                    f"using {heron_yaml.name} (config.json is ignored when heron.yaml exists)"
                )
        elif config_json.is_file():
            cfg_path = config_json
        else:
            return Project(root, {}, None, notes)
    return Project(root, _read_config(cfg_path), cfg_path, notes)


def _read_config(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text) if path.suffix in (".yaml", ".yml") else json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProjectError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ProjectError(f"{where}: invalid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ProjectError(f"{path}: the top level must be an object")
    return data


def parse_cli_options(pairs: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``-o key=value`` pairs, values YAML-parsed as sparse does (``-o a=1`` gives int 1)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ProjectError(f"-o {pair!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = raw
    return out


def resolve_options(env_settings: Mapping[str, Any], topology_config: Mapping[str, Any] | None,
                    cli_options: Mapping[str, Any], *, ackers: int | None = None,
                    workers: int | None = None, debug: bool = False) -> dict[str, Any]:
    """Merge options as ``sparse run`` does: env options < Topology.config < command line."""
    options: dict[str, Any] = {}
    log_conf = env_settings.get("log") or {}
    for key in ("path", "file", "max_bytes", "backup_count", "level"):
        if key in log_conf:
            options[f"pystorm.log.{key}"] = log_conf[key]
    if "log_path" in env_settings:
        options.setdefault("pystorm.log.path", env_settings["log_path"])
    if "log_file" in env_settings:
        options.setdefault("pystorm.log.file", env_settings["log_file"])
    options.update(env_settings.get("options") or {})
    options.update(topology_config or {})
    options.update(cli_options)
    if ackers is not None:
        options["topology.acker.executors"] = ackers
    if workers is not None:
        options["topology.workers"] = workers
    if debug:
        options["topology.debug"] = True
    if options.get("topology.debug"):
        options["pystorm.log.level"] = "debug"
    # `sparse run` uses one worker and one acker unless told 0 ackers.
    options.setdefault("topology.workers", 1)
    if (
        options.get("topology.acker.executors") is None
        and "topology.reliability.mode" not in options
    ):
        options["topology.acker.executors"] = 1
    return options
