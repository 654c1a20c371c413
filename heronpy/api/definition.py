"""A heronpy topology's definition file: what ``Topology.write()`` leaves for the CLI.

Heron's ``Topology.write()`` serializes the topology (a protobuf naming each component's
class path) into ``NAME.defn`` in the directory ``HERON_OPTIONS`` names; the CLI launches
what it finds there, and every instance imports its component class by class path from
the pex. Ours does the same with our own format (JSON): the topology's name, its config
and its ``HeronComponentSpec``s, pickled with cloudpickle, which keeps a class that a
module defines as a reference to its import path (as Heron's class path) and carries a
class the main defines itself (``__main__``) by value. The CLI adds where the code is
(``sys_path``: the pex, or a ``.py`` file's import roots) and the file submitted
(``source``, what ``get_topology_pex_path()`` answers), a pex's copy named relative to
the definition's directory, so that directory is all a cluster's node needs;
:func:`read_definition` rebuilds the topology class from it in the CLI and in every instance.

Writing sits below, in heronpy/api/definition_writer.py (``Topology.write()`` calls it);
reading sits here, above the ``Topology`` class it rebuilds, so neither imports the other's
module back.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import cloudpickle

from heronpy.api.component.context import TOPOLOGY_FILE_KEY
from heronpy.api.definition_writer import FORMAT
from heronpy.api.topology import Topology, TopologyType

__all__ = ["DefinitionError", "load_document", "read_definition", "save_document"]


class DefinitionError(Exception):
    """A definition file that cannot be read or rebuilt (one line, naming the file)."""


def load_document(path: Path) -> dict[str, Any]:
    """The definition's JSON, checked for its format."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DefinitionError(f"{path}: not a topology definition ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise DefinitionError(f"{path}: not a topology definition written by "
                              f"Topology.write() (format {FORMAT})")
    return document


def save_document(path: Path, document: Mapping[str, Any]) -> None:
    """Write a definition back (the CLI adds ``sys_path`` and ``source``)."""
    path.write_text(json.dumps(dict(document), indent=1), encoding="utf-8")


def read_definition(path: Path | str) -> type:
    """The topology class a definition describes, its code's locations put on
    ``sys.path`` first (after this project's own ``heronpy``, already imported here,
    so a pex that bundles another ``heronpy`` cannot replace it)."""
    path = Path(path)
    document = load_document(path)
    for entry in document.get("sys_path") or []:
        entry = str(path.parent / entry)  # relative: beside the definition (a pex's copy)
        if entry not in sys.path:
            sys.path.append(entry)
    try:
        specs = cloudpickle.loads(base64.b64decode(document["specs"]))
    except Exception as exc:
        raise DefinitionError(
            f"{path}: the components of topology {document.get('name')!r} cannot be loaded "
            f"from {document.get('source') or 'its code'}: {type(exc).__name__}: {exc}"
        ) from None
    config = dict(document.get("config") or {})
    if document.get("source"):
        config[TOPOLOGY_FILE_KEY] = str(path.parent / document["source"])
    class_dict: dict[str, Any] = {spec.name: spec for spec in specs}
    class_dict["config"] = config
    class_dict["__module__"] = __name__
    return TopologyType(str(document["name"]), (Topology,), class_dict)

