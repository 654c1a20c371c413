"""Every bad Flux file is one FluxError line: ``FILE:LINE: ...`` naming what is wrong."""

from __future__ import annotations

import re

import pytest

from compat.flux import FluxError, read_flux
from compat.storm_api.project import ProjectError

from .conftest import SHELL_BOLT, shell_topology


def _error(path) -> str:
    with pytest.raises(FluxError) as info:
        read_flux(path)
    message = str(info.value)
    assert "\n" not in message
    assert isinstance(info.value, ProjectError) and isinstance(info.value, ValueError)
    return message


def test_unknown_top_level_key(flux_file):
    path = flux_file('name: "x"\nspoutz: []\n')
    assert _error(path) == (f"{path}:2: unknown key 'spoutz' in the top level (known: name, "
                            "config, components, includes, spouts, bolts, streams, "
                            "topologySource, workerHooks)")


def test_unknown_key_in_a_bolt(flux_file):
    path = flux_file(shell_topology().replace('      - ["word"]\n',
                                              '      - ["word"]\n    paralelism: 2\n'))
    assert re.fullmatch(rf"{re.escape(str(path))}:14: unknown key 'paralelism' in a bolt .*",
                        _error(path))


def test_unknown_key_in_a_grouping(flux_file):
    path = flux_file(shell_topology().replace("type: SHUFFLE", "type: SHUFFLE\n      stream: x"))
    assert f"{path}:19: unknown key 'stream' in a grouping" in _error(path)


def test_wrong_types_name_the_key(flux_file):
    path = flux_file(shell_topology().replace(f'className: "{SHELL_BOLT}"',
                                              f'className: "{SHELL_BOLT}"\n    parallelism: two'))
    assert f"{path}:11: 'parallelism' must be a whole number of at least 1, not 'two'" in _error(
        path
    )
    path = flux_file('name: "x"\nconfig: [1, 2]\n')
    assert _error(path) == f"{path}:2: 'config' must be a mapping, not a list"
    path = flux_file('name: "x"\nspouts: {id: s}\n')
    assert _error(path) == f"{path}:2: 'spouts' must be a list"


def test_invalid_yaml_names_the_line(flux_file):
    path = flux_file('name: "x"\nspouts:\n  - id: [unclosed\n')
    assert _error(path).startswith(f"{path}:4: invalid YAML")


def test_dangling_ref(flux_file):
    path = flux_file("""
        components:
          - id: "props"
            className: "java.util.Properties"
        spouts:
          - id: "kafka"
            className: "org.apache.storm.kafka.spout.KafkaSpout"
            constructorArgs:
              - ref: "spoutConfig"
        """)
    assert _error(path) == (f"{path}:8: ref 'spoutConfig': no component has that id "
                            "(components: props)")


def test_missing_property_leaves_the_placeholder_and_the_type_check_names_it(flux_file):
    path = flux_file(shell_topology().replace('      - ["word"]\n',
                                              '      - ["word"]\n    parallelism: ${par}\n'))
    assert (f"{path}:14: 'parallelism' must be a whole number of at least 1, not '${{par}}'"
            == _error(path))


def test_stream_from_an_unknown_component(flux_file):
    path = flux_file(shell_topology(streams="""
  - from: "nowhere"
    to: "split"
    grouping: {type: SHUFFLE}"""))
    assert _error(path) == (f"{path}:19: stream nowhere -> split: from 'nowhere': no spout or "
                            "bolt has that id (spouts: spout; bolts: split)")


def test_stream_to_an_unknown_or_spout_component(flux_file):
    path = flux_file(shell_topology(streams="""
  - name: "to nothing"
    from: "split"
    to: "count"
    grouping: {type: SHUFFLE}"""))
    assert _error(path) == (f"{path}:21: stream 'to nothing': to 'count': no bolt has that "
                            "id (spouts: spout; bolts: split)")
    path = flux_file(shell_topology(streams="""
  - from: "split"
    to: "spout"
    grouping: {type: SHUFFLE}"""))
    assert (
        _error(path)
        == f"{path}:20: stream split -> spout: to 'spout': is a spout; streams go to bolts"
    )


def test_stream_naming_an_undeclared_stream_or_field(flux_file):
    bolt = f"""
  - id: "count"
    className: "{SHELL_BOLT}"
    constructorArgs: [["python3", "count.py"], ["word", "count"]]"""
    path = flux_file(shell_topology(extra_bolts=bolt, streams="""
  - from: "split"
    to: "count"
    grouping: {type: FIELDS, args: ["wrd"]}"""))
    assert _error(path) == (f"{path}:24: stream split -> count: field(s) wrd are not output "
                            "fields of 'split' stream 'default' (word)")
    path = flux_file(shell_topology(extra_bolts=bolt, streams="""
  - from: "split"
    to: "count"
    grouping: {type: SHUFFLE, streamId: "errors"}"""))
    assert _error(path) == (f"{path}:24: stream split -> count: 'split' declares no stream "
                            "'errors' (its streams: default)")


def test_unknown_grouping_type_and_fields_without_args(flux_file):
    path = flux_file(shell_topology().replace("type: SHUFFLE", "type: PARTIAL_KEY"))
    assert _error(path).startswith(f"{path}:18: unknown grouping type 'PARTIAL_KEY'")
    path = flux_file(shell_topology().replace("type: SHUFFLE", "type: FIELDS"))
    assert _error(path) == (f"{path}:18: stream spout -> split: a FIELDS grouping needs args: "
                            "[field, ...]")


def test_a_bolt_without_input_and_duplicate_ids(flux_file):
    path = flux_file(shell_topology(extra_bolts=f"""
  - id: "lonely"
    className: "{SHELL_BOLT}"
    constructorArgs: [["python3", "x.py"]]"""))
    assert _error(path) == f"{path}:14: bolt 'lonely' has no input: add a stream with to: lonely"
    path = flux_file(shell_topology(extra_bolts=f"""
  - id: "split"
    className: "{SHELL_BOLT}"
    constructorArgs: [["python3", "x.py"]]"""))
    assert _error(path) == f"{path}:14: duplicate bolt id 'split' (first at {path}:9)"


def test_no_spouts_and_missing_file(flux_file, tmp_path):
    path = flux_file('name: "x"\n')
    assert (
        _error(path)
        == f"{path}:1: the topology has no spouts (a 'spouts' list with at least one entry)"
    )
    assert _error(tmp_path / "none.yaml") == f"{tmp_path / 'none.yaml'}: no such Flux file"


def test_property_needs_value_or_ref(flux_file):
    path = flux_file("""
        components:
          - id: "b"
            className: "java.util.Properties"
            properties:
              - name: "x"
        spouts: []
        """)
    assert _error(path) == f"{path}:5: property 'x' needs exactly one of 'value' and 'ref'"
