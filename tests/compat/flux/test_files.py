"""``included_files``: each include with the file ``read_flux`` reads it from and in
which of its places it was found (the cluster package puts each back there)."""

from __future__ import annotations

import pytest

from compat.flux import FluxError, read_flux
from compat.flux.files import included_files

from .conftest import shell_topology

PART = """
config:
  topology.debug: false
"""


def test_each_include_is_named_with_where_read_flux_found_it(flux_file, tmp_path):
    main = flux_file(shell_topology() + "includes:\n"
                     '  - {file: "parts/${part}.yaml"}\n'
                     '  - {file: "from_cwd.yaml"}\n'
                     '  - {file: "/res.yaml", resource: true}\n'
                     f'  - {{file: "{tmp_path / "abs.yaml"}"}}\n', "flux/topology.yaml")
    for name in ("flux/parts/bolts.yaml", "work/from_cwd.yaml", "flux/resources/res.yaml",
                 "abs.yaml"):
        flux_file(PART, name)
    flux = read_flux(main, filter_file=flux_file("part=bolts\n", "f.properties"),
                     cwd=tmp_path / "work")
    found = included_files(flux.path, flux.values, flux.cwd)
    assert [(f.include.file, f.file, f.found) for f in found] == [
        ("parts/bolts.yaml", tmp_path / "flux" / "parts" / "bolts.yaml", "yaml"),
        ("from_cwd.yaml", tmp_path / "work" / "from_cwd.yaml", "cwd"),
        ("/res.yaml", tmp_path / "flux" / "resources" / "res.yaml", "resource"),
        (str(tmp_path / "abs.yaml"), tmp_path / "abs.yaml", "absolute")]


def test_a_missing_include_is_the_readers_error(flux_file, tmp_path):
    main = flux_file(shell_topology() + 'includes:\n  - {file: "gone.yaml"}\n')
    with pytest.raises(FluxError, match=r"include 'gone.yaml': no such file"):
        included_files(main, {}, tmp_path)
