"""Flux ``includes``: other files' definitions merged into the including file's.

As flux-core does: an include is read with the same substitution, its own includes are
not followed (Flux's are not recursive; a warning says so), and each part merges by id:
with ``override: true`` the included definition replaces the including file's, with
``override: false`` (the default) the including file wins. Config keys merge the same
way; streams are appended. A non-resource path is opened relative to the working
directory, as Flux does, and else relative to the including file; ``resource: true``
(a path inside the jar) is looked up in the topology's ``resources/`` directory, then
beside the file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .errors import FluxError
from .model import IncludeDef, TopologyDef

__all__ = ["include_path", "merge_include"]


def include_path(include: IncludeDef, yaml_dir: Path, cwd: Path) -> Path:
    """The file an include names; FluxError at the include's line naming the places
    tried when there is none."""
    name = include.file
    if include.resource:
        relative = name.lstrip("/")
        candidates = [yaml_dir / "resources" / relative, yaml_dir / relative]
    elif Path(name).is_absolute():
        candidates = [Path(name)]
    else:
        candidates = [cwd / name, yaml_dir / name]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(str(c) for c in dict.fromkeys(candidates))
    raise FluxError(include.where, f"include {name!r}: no such file (tried {tried})")


def merge_include(topology: TopologyDef, included: TopologyDef, include: IncludeDef,
                  warn: Callable[[str], None]) -> None:
    """Merge ``included`` into ``topology`` by Flux's override rules."""
    override = include.override
    where = include.where
    if included.includes:
        warn(f"{included.includes[0].where}: includes of an included file are not read "
             "(Flux's includes are not recursive)")
    if included.name is not None:
        if topology.name is None or override:
            topology.name, topology.name_where = included.name, included.name_where
        elif included.name != topology.name:
            warn(f"{where}: the included name {included.name!r} is ignored (override: false)")
    for key, value in included.config.items():
        if key in topology.config and not override:
            if topology.config[key] != value:
                warn(f"{where}: included config {key!r} is ignored (override: false)")
            continue
        topology.config[key] = value
    for table, what in (("components", "component"), ("spouts", "spout"), ("bolts", "bolt")):
        mine, theirs = getattr(topology, table), getattr(included, table)
        for entry_id, entry in theirs.items():
            if entry_id in mine and not override:
                warn(f"{entry.where}: included {what} {entry_id!r} is ignored: "
                     f"{mine[entry_id].where} defines it (override: false)")
                continue
            mine[entry_id] = entry
    topology.streams.extend(included.streams)
