"""``included_files``: which file each ``includes`` entry of a Flux file was read from,
and how it was found, so a tool that must carry a Flux topology elsewhere (the
cluster package, engine/common/cluster/package.py) can put each file where ``read_flux`` will
find it again. Read-only: nothing is parsed beyond the including file's own entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .includes import include_path
from .model import IncludeDef
from .parser import load_yaml
from .schema import read_definitions
from .substitution import substitute

__all__ = ["IncludedFile", "included_files"]


@dataclass(frozen=True)
class IncludedFile:
    """One include of a Flux file: the entry, the file it names, and ``found`` in which
    of ``read_flux``'s places: ``resource`` (``resource: true``), ``absolute`` (an
    absolute path), ``cwd`` (relative to the working directory) or ``yaml`` (relative to
    the including file's directory)."""

    include: IncludeDef
    file: Path
    found: str


def included_files(path: Path | str, values: Mapping[str, str],
                   cwd: Path | str) -> list[IncludedFile]:
    """The includes of the Flux file ``path`` read with the substitution ``values`` of a
    ``FluxTopology`` (its ``.values``) and its ``.cwd``, found as ``read_flux`` finds
    them (FluxError when one is missing, as there)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    done = substitute(text, str(path), recorded=values)
    definitions = read_definitions(load_yaml(done.text, str(path)), [])
    yaml_dir, base = path.resolve().parent, Path(cwd)
    out = []
    for include in definitions.includes:
        file = include_path(include, yaml_dir, base)
        if include.resource:
            found = "resource"
        elif Path(include.file).is_absolute():
            found = "absolute"
        else:
            found = "cwd" if file == base / include.file else "yaml"
        out.append(IncludedFile(include, file, found))
    return out
