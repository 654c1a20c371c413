"""``includes``: relative to the working directory first, then to the file; override
rules; not recursive."""

from __future__ import annotations

import pytest

from compat.flux import FluxError, read_flux

from .conftest import SHELL_BOLT, SHELL_SPOUT

BASE = f"""
name: "base"
config:
  topology.workers: 1
  only.base: "b"
spouts:
  - id: "spout"
    className: "{SHELL_SPOUT}"
    constructorArgs: [["python3", "base_spout.py"], ["word"]]
bolts:
  - id: "count"
    className: "{SHELL_BOLT}"
    constructorArgs: [["python3", "base_count.py"]]
streams:
  - {{from: spout, to: count, grouping: {{type: FIELDS, args: [word]}}}}
"""


def _main(override: bool) -> str:
    return f"""
name: "main"
config:
  topology.workers: 3
includes:
  - file: "shared/base.yaml"
    override: {str(override).lower()}
spouts:
  - id: "spout"
    className: "{SHELL_SPOUT}"
    constructorArgs: [["python3", "main_spout.py"], ["word"]]
"""


def test_override_false_keeps_the_including_files_definitions(flux_file, tmp_path):
    flux_file(BASE, "shared/base.yaml")
    flux = read_flux(flux_file(_main(False)), cwd=tmp_path / "elsewhere")
    assert flux.name == "main"
    assert flux.config == {"topology.workers": 3, "only.base": "b"}
    assert flux.spouts[0].command == ["python3", "main_spout.py"]
    assert flux.bolts[0].command == ["python3", "base_count.py"]
    assert [(s.source, s.target) for s in flux.streams] == [("spout", "count")]
    assert any("included spout 'spout' is ignored" in w for w in flux.warnings)


def test_override_true_lets_the_include_win(flux_file, tmp_path):
    flux_file(BASE, "shared/base.yaml")
    flux = read_flux(flux_file(_main(True)), cwd=tmp_path / "elsewhere")
    assert flux.name == "base"
    assert flux.config["topology.workers"] == 1
    assert flux.spouts[0].command == ["python3", "base_spout.py"]


def test_working_directory_comes_before_the_files_directory(flux_file, tmp_path):
    flux_file(BASE, "shared/base.yaml")
    cwd = tmp_path / "cwd"
    (cwd / "shared").mkdir(parents=True)
    (cwd / "shared" / "base.yaml").write_text(BASE.replace("base_count.py", "cwd_count.py"))
    flux = read_flux(flux_file(_main(False)), cwd=cwd)
    assert flux.bolts[0].command == ["python3", "cwd_count.py"]
    assert flux.cwd == cwd.resolve()


def test_resource_includes_are_looked_up_in_resources(flux_file, tmp_path):
    flux_file(BASE, "resources/base.yaml")
    path = flux_file(_main(False).replace('file: "shared/base.yaml"',
                                          'file: "/base.yaml"\n    resource: true'))
    assert read_flux(path, cwd=tmp_path).bolts[0].id == "count"


def test_includes_are_substituted_and_not_recursive(flux_file, tmp_path):
    flux_file(BASE.replace("base_count.py", "${script}") + "includes:\n  - file: nothing.yaml\n",
              "shared/base.yaml")
    props = tmp_path / "p.properties"
    props.write_text("script=from_filter.py\n")
    flux = read_flux(flux_file(_main(False)), filter_file=props, cwd=tmp_path)
    assert flux.bolts[0].command == ["python3", "from_filter.py"]
    assert flux.values == {"script": "from_filter.py"}
    assert any("not recursive" in w for w in flux.warnings)


def test_a_missing_include_names_its_line_and_the_places_tried(flux_file, tmp_path):
    path = flux_file(_main(False))
    with pytest.raises(FluxError, match=rf"^{path}:5: include 'shared/base.yaml': no such file "
                                        rf"\(tried {tmp_path}/cwd/shared/base.yaml, "
                                        rf"{tmp_path}/shared/base.yaml\)$"):
        read_flux(path, cwd=tmp_path / "cwd")
