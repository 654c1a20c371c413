"""Java classes: shell wrappers map, other classes are refused at the line naming them."""

from __future__ import annotations

import pytest

from compat.flux import FluxError, read_flux

from .conftest import SHELL_BOLT, SHELL_SPOUT, shell_topology


def _refused(path, line: int, what: str, cls: str) -> None:
    with pytest.raises(FluxError) as info:
        read_flux(path)
    assert str(info.value).startswith(f"{path}:{line}: {what}: Java class {cls} cannot run on "
                                      "this engine; only Flux's FluxShellSpout/FluxShellBolt")


def test_other_java_bolt_is_refused(flux_file):
    path = flux_file(shell_topology(extra_bolts="""
  - id: "log"
    className: "org.apache.storm.flux.wrappers.bolts.LogInfoBolt"
    parallelism: 1""", streams="""
  - from: "split"
    to: "log"
    grouping: {type: SHUFFLE}"""))
    _refused(path, 14, "bolt 'log'", "org.apache.storm.flux.wrappers.bolts.LogInfoBolt")


def test_other_java_spout_and_component_are_refused(flux_file):
    path = flux_file("""
        spouts:
          - id: "words"
            className: "org.apache.storm.testing.TestWordSpout"
        """)
    _refused(path, 2, "spout 'words'", "org.apache.storm.testing.TestWordSpout")
    path = flux_file(f"""
        components:
          - id: "unused"
            className: "com.example.Thing"
        spouts:
          - id: "s"
            className: "{SHELL_SPOUT}"
            constructorArgs: [["python3", "s.py"], ["x"]]
        """)
    _refused(path, 2, "component 'unused'", "com.example.Thing")


def test_custom_grouping_is_refused(flux_file):
    path = flux_file(shell_topology().replace("type: SHUFFLE", """type: CUSTOM
      customClass:
        className: "org.apache.storm.testing.NGrouping"
        constructorArgs: [1]"""))
    _refused(path, 18, "stream spout -> split: CUSTOM grouping",
             "org.apache.storm.testing.NGrouping")


def test_topology_source_and_worker_hooks_are_refused(flux_file):
    path = flux_file("""
        name: "java-built"
        topologySource:
          className: "org.apache.storm.flux.test.SimpleTopologySource"
        """)
    with pytest.raises(FluxError, match=rf"^{path}:2: topologySource "
                                        r"\(org\.apache\.storm\.flux\.test\.SimpleTopologySource\) "
                                        "builds the topology in Java"):
        read_flux(path)
    path = flux_file('workerHooks:\n  - id: h\n    className: "a.B"\n')
    with pytest.raises(FluxError, match=rf"^{path}:1: workerHooks are Java classes"):
        read_flux(path)


def test_shell_constructor_forms_and_config_methods(flux_file):
    path = flux_file(f"""
        spouts:
          - id: "s"
            className: "{SHELL_SPOUT}"
            constructorArgs:
              - ["node", "randomsentence.js"]
            configMethods:
              - name: "setDefaultStream"
                args: [["sentence"]]
              - name: "setNamedStream"
                args: ["errors", ["error", "line"]]
              - name: "addComponentConfig"
                args: ["publisher.data_paths", ["actions"]]
            parallelism: 2
        bolts:
          - id: "b"
            className: "{SHELL_BOLT}"
            constructorArgs:
              - ["python3", "-u", "bolt.py", "--flag"]
            config:
              topology.tick.tuple.freq.secs: 5
        streams:
          - from: "s"
            to: "b"
            grouping: {{type: SHUFFLE, streamId: "errors"}}
        """)
    flux = read_flux(path)
    spout, bolt = flux.spouts[0], flux.bolts[0]
    assert (spout.kind, spout.command, spout.parallelism) == (
        "shell",
        ["node", "randomsentence.js"],
        2,
    )
    assert spout.outputs == {"default": ["sentence"], "errors": ["error", "line"]}
    assert spout.config == {"publisher.data_paths": ["actions"]}
    assert (bolt.command, bolt.outputs, bolt.config) == (
        ["python3", "-u", "bolt.py", "--flag"], {}, {"topology.tick.tuple.freq.secs": 5})
    assert flux.shell_dir == path.parent


def test_shell_spout_without_fields_and_bad_method(flux_file):
    path = flux_file(f"""
        spouts:
          - id: "s"
            className: "{SHELL_SPOUT}"
            constructorArgs: [["python3", "s.py"]]
        """)
    with pytest.raises(
        FluxError, match=rf"^{path}:2: spout 's': a shell spout needs output fields"
    ):
        read_flux(path)
    path = flux_file(f"""
        spouts:
          - id: "s"
            className: "{SHELL_SPOUT}"
            constructorArgs: [["python3", "s.py"], ["x"]]
            configMethods:
              - name: "setEnv"
                args: [{{A: b}}]
        """)
    with pytest.raises(FluxError, match=rf"^{path}:6: spout 's': setEnv with 1 argument\(s\) "
                                        "has no equivalent here"):
        read_flux(path)
    path = flux_file(f"""
        spouts:
          - id: "s"
            className: "{SHELL_SPOUT}"
            constructorArgs: ["python3 s.py", ["x"]]
        """)
    with pytest.raises(FluxError, match=rf"^{path}:2: spout 's': the command must be a list"):
        read_flux(path)


def test_shell_dir_is_resources_when_present(flux_file):
    path = flux_file(shell_topology())
    (path.parent / "resources").mkdir()
    assert read_flux(path).shell_dir == path.parent / "resources"
