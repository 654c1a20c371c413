"""``HERON_OPTIONS``: how Heron's CLI tells a topology's main where to write its definition.

Heron's CLI runs a topology's main (``FILE.pex - ARGS``) with the environment variable
``HERON_OPTIONS`` holding ``key=value`` pairs joined by ``,``, spaces written ``%%%%``.
heronpy's ``Topology.write()`` reads it to learn the directory the definition goes to
(``cmdline.topologydefn.tmpdirectory``), the topology's name when the CLI gives one
(``cmdline.topology.name``) and its initial state (``cmdline.topology.initial.state``).
The CLI (engine/tools/cli/heronpy_files.py) writes the variable with :func:`format_options`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

ENV_VAR = "HERON_OPTIONS"
TMPDIR_KEY = "cmdline.topologydefn.tmpdirectory"
NAME_KEY = "cmdline.topology.name"
INITIAL_STATE_KEY = "cmdline.topology.initial.state"
_SPACE = "%%%%"


def parse_options(raw: str) -> dict[str, str]:
    """The pairs of a ``HERON_OPTIONS`` value; a part without ``=`` is a ``ValueError``,
    as in heronpy."""
    options: dict[str, str] = {}
    for part in raw.replace(_SPACE, " ").split(","):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"Invalid HERON_OPTIONS part {part!r}")
        options[key] = value
    return options


def format_options(options: Mapping[str, str]) -> str:
    """The ``HERON_OPTIONS`` value for ``options`` (spaces written ``%%%%``)."""
    return ",".join(f"{key}={str(value).replace(' ', _SPACE)}"
                    for key, value in options.items())


def options_from_env() -> dict[str, str]:
    """``HERON_OPTIONS`` of this process; a ``RuntimeError`` naming the variable when it
    is not set (the main was not started by ``heron submit``/``heron run``)."""
    raw = os.environ.get(ENV_VAR)
    if raw is None:
        raise RuntimeError(
            f"{ENV_VAR} is not set: a topology's main writes its definition when "
            "`heron submit CLUSTER FILE - ARGS` or `heron run FILE - ARGS` runs it")
    return parse_options(raw)
