"""Helpers for the Flux reader's tests: a Flux file written to a temporary directory."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

SHELL_SPOUT = "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
SHELL_BOLT = "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"


@pytest.fixture
def flux_file(tmp_path: Path) -> Callable[..., Path]:
    """``flux_file(text, name="topology.yaml")`` writes dedented ``text`` and returns its path."""

    def write(text: str, name: str = "topology.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    return write


def shell_topology(extra_bolts: str = "", streams: str = "") -> str:
    """A small shell word count (lines 1-20); ``extra_bolts`` (entries of ``bolts``) and
    ``streams`` (entries of ``streams``) are YAML at two spaces of indentation."""
    return "\n".join([
        'name: "wc"',                                   # 1
        "spouts:",                                      # 2
        '  - id: "spout"',                              # 3
        f'    className: "{SHELL_SPOUT}"',              # 4
        "    constructorArgs:",                         # 5
        '      - ["python3", "spout.py"]',              # 6
        '      - ["sentence"]',                         # 7
        "bolts:",                                       # 8
        '  - id: "split"',                              # 9
        f'    className: "{SHELL_BOLT}"',               # 10
        "    constructorArgs:",                         # 11
        '      - ["python3", "split.py"]',              # 12
        '      - ["word"]',                             # 13
        *extra_bolts.strip("\n").splitlines(),
        "streams:",
        '  - from: "spout"',
        '    to: "split"',
        "    grouping:",
        "      type: SHUFFLE",
        *streams.strip("\n").splitlines(),
    ]) + "\n"
