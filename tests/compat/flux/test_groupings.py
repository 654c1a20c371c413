"""Every Flux grouping and named streams, through the Topology class to the compiled plan."""

from __future__ import annotations

from compat.flux import read_flux
from engine.common.plan.compiler import compile_topology

from .conftest import SHELL_BOLT, SHELL_SPOUT

KINDS = {"SHUFFLE": "shuffle", "FIELDS": "fields", "ALL": "all", "GLOBAL": "global",
         "NONE": "none", "LOCAL_OR_SHUFFLE": "local_or_shuffle", "DIRECT": "direct"}


def _topology() -> str:
    bolts, streams = [], []
    for kind in KINDS:
        bolt = kind.lower()
        bolts.append(f"""
  - id: "{bolt}"
    className: "{SHELL_BOLT}"
    constructorArgs: [["python3", "{bolt}.py"]]
    parallelism: 2""")
        stream_id = "direct" if kind == "DIRECT" else "words"
        args = '\n      args: ["word"]' if kind == "FIELDS" else ""
        streams.append(f"""
  - name: "to {bolt}"
    from: "spout"
    to: "{bolt}"
    grouping:
      type: {kind}
      streamId: "{stream_id}"{args}""")
    return f"""name: "groupings"
config:
  topology.workers: 2
spouts:
  - id: "spout"
    className: "{SHELL_SPOUT}"
    constructorArgs: [["python3", "spout.py"], ["line"]]
    configMethods:
      - name: "setNamedStream"
        args: ["words", ["word", "n"]]
      - name: "setNamedStream"
        args: ["direct", ["word"]]
bolts:{"".join(bolts)}
streams:{"".join(streams)}
"""


def test_every_grouping_reaches_the_plan_on_its_named_stream(flux_file):
    flux = read_flux(flux_file(_topology()))
    assert [(s.target, s.grouping, s.stream_id) for s in flux.streams] == [
        (kind.lower(), kind, "direct" if kind == "DIRECT" else "words") for kind in KINDS]
    plan = compile_topology(flux.topology_class(), name=flux.name, config=flux.config).plan
    assert plan.config["topology.workers"] == 2
    for kind, grouping in KINDS.items():
        (edge,) = plan.components[kind.lower()].inputs
        assert (edge.source, edge.stream, edge.grouping) == (
            "spout", "direct" if kind == "DIRECT" else "words", grouping)
        if kind == "FIELDS":
            assert edge.fields == ("word",)
        if kind == "GLOBAL":
            assert edge.fields == ()
    spout = plan.components["spout"]
    assert {name: (s.fields, s.direct) for name, s in spout.outputs.items()} == {
        "default": (("line",), False), "words": (("word", "n"), False),
        "direct": (("word",), True)}
    assert plan.components["fields"].parallelism == 2


def test_shell_components_keep_their_command_line(flux_file):
    flux = read_flux(flux_file(f"""
        spouts:
          - id: "one"
            className: "{SHELL_SPOUT}"
            constructorArgs: [["./spout"], ["x"]]
        bolts:
          - id: "many"
            className: "{SHELL_BOLT}"
            constructorArgs: [["python3", "-u", "my bolt.py"]]
        streams:
          - {{from: one, to: many, grouping: {{type: SHUFFLE}}}}
        """))
    plan = compile_topology(flux.topology_class(), name=flux.name).plan
    from engine.common.multilang.launch import shell_argv

    assert shell_argv(*plan.components["one"].shell) == ["./spout"]
    assert shell_argv(*plan.components["many"].shell) == ["python3", "-u", "my bolt.py"]
