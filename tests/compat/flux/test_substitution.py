"""``${...}`` substitution: properties, list elements, environment, unknown placeholders,
and rebuilding from recorded values."""

from __future__ import annotations

import pytest

from compat.flux import FluxError, read_flux
from compat.flux.substitution import substitute

from .conftest import SHELL_SPOUT


def test_properties_replace_placeholders_before_yaml_parses():
    done = substitute("a: ${n}\nb: [${x}, ${y}]\n", "f.yaml", properties={"n": "3", "x": "1",
                                                                         "y": "two"})
    assert done.text == "a: 3\nb: [1, two]\n"
    assert done.values == {"n": "3", "x": "1", "y": "two"}
    assert done.warnings == []


def test_list_property_element():
    props = {"a.list.property": '["A string list", "second"]'}
    done = substitute("x: ${a.list.property[1]}\ny: ${a.list.property[0]}", "f.yaml",
                      properties=props)
    assert done.text == "x: second\ny: A string list"


def test_list_index_out_of_range_is_an_error_at_its_line():
    with pytest.raises(FluxError, match=r"f\.yaml:2: \$\{l\[5\]\}: list property has 2"):
        substitute("a: 1\nb: ${l[5]}", "f.yaml", properties={"l": '["a", "b"]'})


def test_environment_only_with_env_filter():
    env = {"HOME_DIR": "/home/x"}
    with_filter = substitute("h: ${ENV-HOME_DIR}", "f.yaml", env_filter=True, environ=env)
    assert with_filter.text == "h: /home/x"
    without = substitute("h: ${ENV-HOME_DIR}", "f.yaml", env_filter=False, environ=env)
    assert without.text == "h: ${ENV-HOME_DIR}"
    assert without.warnings == ["f.yaml:1: no value for ${ENV-HOME_DIR} (environment "
                                "placeholders need --env-filter); left as it is"]


def test_unknown_placeholder_is_left_with_a_warning_naming_the_line():
    done = substitute("a: 1\nb: ${missing}\n", "f.yaml", properties={})
    assert done.text == "a: 1\nb: ${missing}\n"
    assert done.warnings == ["f.yaml:2: no value for ${missing} (not in the --filter "
                             "properties); left as it is"]


def test_recorded_values_are_the_only_source():
    done = substitute("a: ${x}\nb: ${ENV-Y}", "f.yaml", properties={"x": "other"},
                      env_filter=True, environ={"Y": "other"},
                      recorded={"x": "1", "ENV-Y": "2"})
    assert done.text == "a: 1\nb: 2"


def test_read_flux_records_values_and_rebuilds_without_filter_or_environment(flux_file, tmp_path):
    path = flux_file(f"""
        name: "${{topology.name}}"
        config:
          topology.workers: ${{workers}}
          who: "${{ENV-FLUX_TEST_USER}}"
        spouts:
          - id: "s"
            className: "{SHELL_SPOUT}"
            constructorArgs: [["python3", "s.py"], ["x"]]
            parallelism: ${{par}}
        """)
    props = tmp_path / "dev.properties"
    props.write_text("topology.name=subst\nworkers=2\npar=3\n")
    flux = read_flux(path, filter_file=props, env_filter=True,
                     environ={"FLUX_TEST_USER": "ann"})
    assert (flux.name, flux.config, flux.spouts[0].parallelism) == (
        "subst", {"topology.workers": 2, "who": "ann"}, 3)
    again = read_flux(path, values=flux.values, environ={})
    assert (again.name, again.config, again.spouts[0].parallelism) == (
        "subst", {"topology.workers": 2, "who": "ann"}, 3)
