"""From heronpy's specs to the ``compat.storm_api`` specs our compiler reads.

A heronpy ``Topology`` class becomes a ``compat.storm_api`` Topology class with the same
components, streams, groupings and config, so the compiler, both engines and every CLI
command treat it as any other topology. What Heron's instance would do when it reads the
topology's protobuf is done here, once, at load:

* config values are what Heron's instance gives components: heronpy writes numbers and
  booleans as strings and the instance turns numeric and true/false strings back into
  numbers and booleans, so ``{"x": "5"}`` reaches ``initialize`` as ``5``; values that
  are not JSON (heronpy would cloudpickle them) are refused in one line;
* ``topology.component.parallelism`` is not written into a component's config (our plan
  keeps a component's parallelism there itself, so ``heron update`` can change it): the
  runtime adapter gives ``initialize`` the component's current number of tasks under it;
* a bolt's tick: the engine ticks a heronpy bolt every second (or at its own frequency
  when that is shorter) and the runtime adapter delivers ``process_tick`` at the
  frequency the config holds after ``initialize`` (see ``runtime``); the frequency the
  user set is kept under ``heronpy.tick.tuple.freq.secs``;
* groupings map to Storm's; a Python custom grouping becomes the engines' own
  (``python_custom``: run by the emitting task, prepared with heronpy's context,
  ``custom_grouping_spec``).
"""

from __future__ import annotations

import json
from typing import Any

from compat.storm_api import thrift
from compat.storm_api.dsl import Grouping as StormGrouping
from compat.storm_api.dsl import Stream as StormStream
from compat.storm_api.dsl.component import (
    PYTHON_COMMAND,
    PythonBoltSpec,
    PythonSpoutSpec,
    ShellBoltSpec,
    ShellSpoutSpec,
)
from compat.storm_api.dsl.stream import GlobalStreamId as StormGlobalStreamId
from heronpy.api import api_constants
from heronpy.api.component.component_spec import HeronComponentSpec
from heronpy.api.component.custom_grouping_spec import CustomGroupingError, engine_spec
from heronpy.api.component.runtime import USER_TICK_KEY
from heronpy.api.stream import Grouping

#: the engine's tick for a heronpy bolt when the user set none or a longer one
ENGINE_TICK_SECS = 1.0


class UnsupportedHeronpyFeature(NotImplementedError):
    """heronpy surface the engines do not run yet; the message names it."""


def auto_typed(value: Any) -> Any:
    """A config value as Heron's instance reads it back (numbers and booleans restored)."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
        try:
            return float(value)
        except ValueError:
            pass
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
    return value


def typed_config(config: dict[str, Any], where: str) -> dict[str, Any]:
    """``config`` with Heron's typing, checked to be JSON (our plans store config as JSON)."""
    if not isinstance(config, dict):
        raise TypeError(f"{where}: configuration must be given as a dict type, given: "
                        f"{type(config)}")
    out = {}
    for key, value in config.items():
        if not isinstance(key, str):
            raise TypeError(f"{where}: key for configuration must be string, given: "
                            f"{type(key)}:{key}")
        value = auto_typed(value)
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise UnsupportedHeronpyFeature(
                f"{where}: config value of {key!r} is a {type(value).__name__}; only JSON "
                "values (str, numbers, booleans, lists, dicts) are supported, Python objects "
                "in config are not yet (issue 40)") from None
        out[key] = value
    return out


class HeronSpoutSpec(PythonSpoutSpec):
    """A heronpy spout as a Python spout spec (outputs from heronpy's spec, not the class)."""

    def __init__(self, component_cls: type, name: str | None, par: int,
                 config: dict[str, Any], outputs: list[Any]) -> None:
        ShellSpoutSpec.__init__(self, component_cls, name=name, command=PYTHON_COMMAND,
                                script=f"{component_cls.__module__}.{component_cls.__name__}",
                                par=par, config=config, outputs=outputs)


class HeronBoltSpec(PythonBoltSpec):
    """A heronpy bolt as a Python bolt spec."""

    def __init__(
        self,
        component_cls: type,
        name: str | None,
        inputs: dict[thrift.GlobalStreamId, thrift.Grouping],
        par: int,
        config: dict[str, Any],
        outputs: list[Any],
    ) -> None:
        ShellBoltSpec.__init__(self, component_cls, name=name, command=PYTHON_COMMAND,
                               script=f"{component_cls.__module__}.{component_cls.__name__}",
                               inputs=inputs, par=par, config=config, outputs=outputs)


def storm_grouping(bolt: str | None, source: str, grouping: Any) -> thrift.Grouping:
    """The Storm grouping for a heronpy one (already checked by ``is_grouping_sane``)."""
    if isinstance(grouping, Grouping.FIELDS):
        return StormGrouping.fields(*grouping.fields)
    if isinstance(grouping, Grouping.CUSTOM):
        try:
            spec = engine_spec(grouping.python_serialized,
                               f"bolt {bolt!r} subscribing to {source!r}")
        except CustomGroupingError as exc:
            raise UnsupportedHeronpyFeature(str(exc)) from None
        return thrift.PythonCustomGrouping(python_custom=spec)
    return {Grouping.SHUFFLE: StormGrouping.SHUFFLE, Grouping.ALL: StormGrouping.ALL,
            Grouping.LOWEST: StormGrouping.GLOBAL, Grouping.NONE: StormGrouping.NONE}[grouping]


def storm_spec(
    spec: HeronComponentSpec, topology_config: dict[str, Any]
) -> HeronSpoutSpec | HeronBoltSpec:
    """The ``compat.storm_api`` spec of one named heronpy spec."""
    cls = spec.component_cls
    if cls is None:
        raise UnsupportedHeronpyFeature(
            f"component {spec.name!r}: a spec built from a class path only "
            f"({spec.python_class_path}) is not supported yet; use {spec.python_class_path}"
            ".spec(...) or TopologyBuilder.add_spout/add_bolt")
    config = typed_config(spec.custom_config or {}, f"{spec.python_class_path}: {spec.name}")
    outputs = [StormStream(fields=fields, name=stream)
               for stream, fields in (spec._sanitize_outputs() or {}).items()]
    if spec.is_spout:
        return HeronSpoutSpec(cls, spec.name, spec.parallelism, config, outputs)
    tick_key = api_constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS
    user_tick = config.get(tick_key, topology_config.get(tick_key))
    config[USER_TICK_KEY] = user_tick
    engine_tick = ENGINE_TICK_SECS
    if isinstance(user_tick, (int, float)) and not isinstance(user_tick, bool) and user_tick > 0:
        engine_tick = min(float(user_tick), ENGINE_TICK_SECS)
    config[tick_key] = engine_tick
    inputs: dict[thrift.GlobalStreamId, thrift.Grouping] = {}
    for stream_id, grouping in (spec._sanitize_inputs() or {}).items():
        source = stream_id.component_id
        inputs[StormGlobalStreamId(componentId=source, streamId=stream_id.stream_id)] = \
            storm_grouping(spec.name, source, grouping)
    return HeronBoltSpec(cls, spec.name, inputs, spec.parallelism, config, outputs)
