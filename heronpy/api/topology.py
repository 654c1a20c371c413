"""heronpy's ``Topology`` (the class-attribute DSL) and ``TopologyBuilder``.

A ``Topology`` subclass is checked as heronpy checks it (names, at least one spout,
spouts with outputs, bolts with inputs, groupings) when its class statement runs, and
then also becomes a ``compat.storm_api`` topology: its ``specs`` and ``config`` are what
our compiler reads (``heronpy.api.component.translate``), so ``heron run FILE.py`` and
every other command take it like a streamparse topology.

``TopologyBuilder.build_and_submit()`` builds the same class and writes it. Heron's CLI
runs a topology file's main with ``HERON_OPTIONS`` set and the main writes the topology's
definition through ``Topology.write()`` (heronpy/api/definition_writer.py) into the directory
``HERON_OPTIONS`` names; ``heron run|submit FILE.pex|FILE.py - ARGS`` does that here
(engine/tools/cli/heronpy_files.py). ``heron run FILE.py`` without ``-`` runs the file's main
inside :func:`capture_submissions`, which takes the built class instead.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, ClassVar, cast

from compat.storm_api import thrift
from compat.storm_api.dsl.component import ComponentSpec
from compat.storm_api.dsl.topology import Topology as StormTopology
from compat.storm_api.dsl.topology import TopologyType as StormTopologyType
from heronpy.api import api_constants
from heronpy.api.bolt.base_bolt import BaseBolt
from heronpy.api.component.component_spec import HeronComponentSpec
from heronpy.api.component.context import TOPOLOGY_FILE_KEY
from heronpy.api.component.translate import storm_spec, typed_config
from heronpy.api.definition_writer import write_definition
from heronpy.api.heron_options import options_from_env
from heronpy.api.spout.base_spout import BaseSpout

#: classes built by build_and_submit() while a CLI loads a topology file (else None)
_captured: list[type] | None = None


@contextlib.contextmanager
def capture_submissions() -> Iterator[list[type]]:
    """While active, ``build_and_submit()`` appends the topology class it builds to the
    yielded list instead of submitting it (the CLI's way of loading a builder script)."""
    global _captured
    saved, _captured = _captured, []
    try:
        yield _captured
    finally:
        _captured = saved


class TopologyType(type):
    """Metaclass to define a Heron topology in Python."""

    DEFAULT_TOPOLOGY_CONFIG = {
        api_constants.TOPOLOGY_DEBUG: "false",
        api_constants.TOPOLOGY_STMGRS: "1",
        api_constants.TOPOLOGY_MESSAGE_TIMEOUT_SECS: "30",
        api_constants.TOPOLOGY_COMPONENT_PARALLELISM: "1",
        api_constants.TOPOLOGY_MAX_SPOUT_PENDING: "100",
        api_constants.TOPOLOGY_RELIABILITY_MODE: api_constants.TopologyReliabilityMode.ATMOST_ONCE,
        api_constants.TOPOLOGY_ENABLE_MESSAGE_TIMEOUTS: "true"}

    def __new__(
        mcs, classname: str, bases: tuple[Any, ...], class_dict: dict[str, Any]
    ) -> TopologyType:
        specs = mcs.class_dict_to_specs(class_dict)
        spouts = [spec for spec in specs.values() if spec.is_spout]
        for spec in specs.values():
            if spec.is_spout and not spec.outputs:
                raise ValueError(f"{spec.python_class_path}: {spec.name} requires at least one "
                                 "output, because it is a spout")
            if not spec.is_spout and not spec.inputs:
                raise ValueError(f"{spec.python_class_path}: {spec.name} requires at least one "
                                 "input, because it is a bolt")
            spec._sanitize_inputs()  # heronpy's grouping and input checks, at definition
        if classname != "Topology" and not spouts:
            raise ValueError("A Topology requires at least one Spout")
        if classname != "Topology":
            config = mcs.class_dict_to_topo_config(class_dict)
            module = sys.modules.get(class_dict.get("__module__", ""))
            topology_file = getattr(module, "__file__", None)
            if topology_file:
                config.setdefault(TOPOLOGY_FILE_KEY, topology_file)
            storm_attrs: dict[str, Any] = {name: storm_spec(spec, config)
                                           for name, spec in specs.items()}
            storm_attrs["config"] = config
            storm_attrs["__module__"] = class_dict.get("__module__", __name__)
            # the same class statement, in the Storm-API DSL: wiring checked once more
            # the metaclass makes a Storm-API Topology subclass, which its type does not say
            storm_cls = cast("type[StormTopology]",
                             StormTopologyType(classname, (StormTopology,), storm_attrs))
            class_dict["_topo_config"] = config
            class_dict["_heron_specs"] = list(specs.values())
            class_dict["topology_name"] = classname
            class_dict["specs"] = storm_cls.specs
            class_dict["config"] = config
            class_dict["thrift_spouts"] = storm_cls.thrift_spouts
            class_dict["thrift_bolts"] = storm_cls.thrift_bolts
        return type.__new__(mcs, classname, bases, class_dict)

    @classmethod
    def class_dict_to_specs(mcs, class_dict: dict[str, Any]) -> dict[str, HeronComponentSpec]:
        """The ``HeronComponentSpec`` class attributes, named after their attributes."""
        specs: dict[str, HeronComponentSpec] = {}
        for name, spec in list(class_dict.items()):
            if isinstance(spec, HeronComponentSpec):
                if spec.name is None:
                    spec.name = name
                if spec.name in specs:
                    raise ValueError(f"Duplicate component name: {spec.name}")
                specs[spec.name] = spec
        return specs

    @classmethod
    def class_dict_to_topo_config(mcs, class_dict: dict[str, Any]) -> dict[str, Any]:
        """heronpy's defaults overlaid with the class's ``config``, typed as Heron's
        instance reads them back."""
        config = dict(mcs.DEFAULT_TOPOLOGY_CONFIG)
        custom = class_dict.get("config")
        if isinstance(custom, dict):
            config.update(custom)
        return typed_config(config, "topology config")


class Topology(metaclass=TopologyType):
    """Subclass it with specs as class attributes (and an optional ``config`` dict)::

        class WordCount(Topology):
            config = {api_constants.TOPOLOGY_RELIABILITY_MODE: "ATLEAST_ONCE"}
            word_spout = WordSpout.spec(par=2)
            count_bolt = CountBolt.spec(par=2, inputs={word_spout: Grouping.fields('word')})
    """

    # set by TopologyType on every subclass (annotations only: the metaclass reads the
    # class body, where a value here would be taken for the user's)
    topology_name: ClassVar[str]
    config: ClassVar[dict[str, Any]]
    specs: ClassVar[list[ComponentSpec]]
    thrift_spouts: ClassVar[dict[str, thrift.SpoutSpec]]
    thrift_bolts: ClassVar[dict[str, thrift.Bolt]]
    _topo_config: ClassVar[dict[str, Any]]
    _heron_specs: ClassVar[list[HeronComponentSpec]]

    @classmethod
    def write(cls) -> None:
        """Write the topology's definition (``NAME.defn``) into the directory
        ``HERON_OPTIONS`` names; meant for the CLI, as in heronpy."""
        if cls.__name__ == "Topology":
            raise ValueError("The base Topology class cannot be writable")
        write_definition(cls, options_from_env())


class TopologyBuilder:
    """Builds a ``Topology`` subclass from ``add_spout``/``add_bolt`` calls."""

    def __init__(self, name: str) -> None:
        assert name is not None and isinstance(name, str) and name != "Topology"
        self.topology_name = name
        self._specs: dict[str, HeronComponentSpec] = {}
        self._topology_config: dict[str, Any] = {}

    def add_spec(self, *specs: HeronComponentSpec) -> None:
        """Add specs (each with a name) to the topology."""
        for spec in specs:
            if not isinstance(spec, HeronComponentSpec):
                raise TypeError(f"Argument to add_spec needs to be HeronComponentSpec, given: "
                                f"{spec}")
            if spec.name is None:
                raise ValueError("TopologyBuilder cannot take a spec without name")
            if spec.name == "config":
                raise ValueError("config is a reserved name")
            if spec.name in self._specs:
                raise ValueError(f"Attempting to add duplicate spec name: {spec.name!r} {spec!r}")
            self._specs[spec.name] = spec

    def add_spout(self, name: str, spout_cls: type[BaseSpout], par: int,
                  config: dict[str, Any] | None = None,
                  optional_outputs: list[Any] | None = None) -> HeronComponentSpec:
        """Add a spout to the topology; returns its spec (for bolts' ``inputs``)."""
        spout_spec = spout_cls.spec(name=name, par=par, config=config,
                                    optional_outputs=optional_outputs)
        self.add_spec(spout_spec)
        return spout_spec

    def add_bolt(self, name: str, bolt_cls: type[BaseBolt], par: int, inputs: Any,
                 config: dict[str, Any] | None = None,
                 optional_outputs: list[Any] | None = None) -> HeronComponentSpec:
        """Add a bolt to the topology; returns its spec."""
        bolt_spec = bolt_cls.spec(name=name, par=par, inputs=inputs, config=config,
                                  optional_outputs=optional_outputs)
        self.add_spec(bolt_spec)
        return bolt_spec

    def set_config(self, config: dict[str, Any]) -> None:
        """Set the topology-wide configuration."""
        if not isinstance(config, dict):
            raise TypeError(f"Argument to set_config needs to be dict, given: {config}")
        self._topology_config = config

    def _construct_topo_class_dict(self) -> dict[str, Any]:
        class_dict: dict[str, Any] = dict(self._specs)
        class_dict["config"] = self._topology_config
        return class_dict

    def build_and_submit(self) -> type[Topology]:
        """Build the topology class and write its definition where ``HERON_OPTIONS``
        says; under ``heron run FILE.py`` (no ``-``) hand the class to the CLI instead."""
        class_dict = self._construct_topo_class_dict()
        class_dict["__module__"] = _caller_module()
        # the metaclass makes a Topology subclass, which its type does not say
        topo_cls = cast("type[Topology]",
                        TopologyType(self.topology_name, (Topology,), class_dict))
        if _captured is None:
            topo_cls.write()
        else:
            _captured.append(topo_cls)
        return topo_cls


def _caller_module() -> str:
    """The module that called build_and_submit() (its file is the topology file)."""
    frame = sys._getframe(2)
    return str(frame.f_globals.get("__name__", __name__))
