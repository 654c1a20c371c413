"""Writing a heronpy topology's definition file: what ``Topology.write()`` leaves for the CLI.

The format (JSON: the topology's name, its config and its ``HeronComponentSpec``s pickled
with cloudpickle) is described in heronpy/api/definition.py, which reads a definition back
into a topology class. Writing sits here, below ``heronpy.api.topology`` whose
``Topology.write()`` calls it, and reading sits above it: the file's format name and suffix
are defined here, where a definition is made, and the reader imports them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, cast

import cloudpickle

from heronpy.api import heron_options
from heronpy.api.component.context import TOPOLOGY_FILE_KEY

FORMAT = "heronpy-definition/1"
SUFFIX = ".defn"


class _Defined(Protocol):
    """What a heronpy Topology class carries for its definition (TopologyType sets it)."""

    @property
    def topology_name(self) -> str: ...

    @property
    def _topo_config(self) -> dict[str, Any]: ...

    @property
    def _heron_specs(self) -> list[Any]: ...


def write_definition(topo_cls: type, options: Mapping[str, str]) -> Path:
    """Write ``topo_cls`` to ``NAME.defn`` in the directory ``options`` names; NAME is
    ``cmdline.topology.name`` when given, else the class's name (as in heronpy)."""
    # a heronpy Topology class (heronpy.api.topology, which imports this module, so it
    # cannot be named here): its metaclass set these
    defined = cast(_Defined, topo_cls)
    directory = options.get(heron_options.TMPDIR_KEY)
    if not directory:
        raise RuntimeError("Topology definition temp directory not specified "
                           f"({heron_options.TMPDIR_KEY} in {heron_options.ENV_VAR})")
    name = options.get(heron_options.NAME_KEY) or defined.topology_name
    config = {k: v for k, v in dict(defined._topo_config).items() if k != TOPOLOGY_FILE_KEY}
    document: dict[str, Any] = {
        "format": FORMAT,
        "name": name,
        "class_name": topo_cls.__name__,
        "initial_state": options.get(heron_options.INITIAL_STATE_KEY, "RUNNING"),
        "config": config,
        "specs": base64.b64encode(cloudpickle.dumps(list(defined._heron_specs))).decode(),
        "sys_path": [],
        "source": "",
    }
    path = Path(directory) / f"{name}{SUFFIX}"
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path
