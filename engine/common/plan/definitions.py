"""The parts a logical plan is made of: components, their output streams and inputs.

``StreamDef``, ``InputDef`` and ``ComponentDef`` are immutable and pickle (plans cross
process boundaries). A ``ComponentDef``'s configuration is normalized through JSON when it
is built (:func:`json_config`); whether the parts fit together is checked when a
``LogicalPlan`` (:mod:`engine.common.plan.logical`) is built from them
(:mod:`engine.common.plan.validation`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .constants import BOLT, DEFAULT_STREAM, SPOUT
from .errors import InvalidConfigError

__all__ = ["ComponentDef", "FrozenMap", "InputDef", "StreamDef", "json_config"]


class FrozenMap(Mapping[str, Any]):
    """A read-only mapping that, unlike ``MappingProxyType``, pickles and copies.

    Plans cross process boundaries (multiprocessing, the storm engine's threads
    handing definitions around), so their mappings must survive pickling.
    """

    __slots__ = ("_data",)
    _data: dict[str, Any]  # set once in __init__, past the read-only __setattr__

    def __init__(self, data: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> None:
        object.__setattr__(self, "_data", dict(data))

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FrozenMap is read-only")

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        return (FrozenMap, (self._data,))

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"


def json_config(config: Mapping[str, Any] | None, where: str, *,
                component: str | None = None) -> FrozenMap:
    """Normalize a configuration mapping through JSON, naming the bad key on failure."""
    if config is None:
        return FrozenMap()
    if not isinstance(config, Mapping):
        raise InvalidConfigError(
            f"{where}: configuration must be a dict of Storm config keys; given {config!r}.",
            component=component,
        )
    normalized = {}
    for key, value in config.items():
        if not isinstance(key, str):
            raise InvalidConfigError(
                f"{where}: config key {key!r} is not a string; Storm config keys are "
                f"dotted strings such as 'topology.message.timeout.secs'.",
                component=component,
            )
        try:
            normalized[key] = json.loads(json.dumps(value))
        except (TypeError, ValueError) as exc:
            raise InvalidConfigError(
                f"{where}: config key {key!r} has a value JSON cannot represent "
                f"({exc}); Storm config values must be JSON (str, number, bool, None, "
                f"list, dict).",
                component=component,
            ) from None
    return FrozenMap(normalized)


@dataclass(frozen=True)
class StreamDef:
    """One output stream of a component (Storm's StreamInfo)."""

    component: str
    name: str
    fields: tuple[str, ...]
    direct: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "direct", bool(self.direct))


@dataclass(frozen=True)
class InputDef:
    """One subscription of a bolt: a source stream and how it is split across tasks.

    ``grouping`` is one of ``GROUPINGS``; ``fields`` is set only for "fields".
    ``custom_grouping`` is "module:QualName" of a Python grouping class, set only
    for "custom" (Storm's Java custom groupings cannot run here and are rejected
    by the compiler).
    """

    source: str
    stream: str = DEFAULT_STREAM
    grouping: str = "shuffle"
    fields: tuple[str, ...] = ()
    custom_grouping: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))


@dataclass(frozen=True)
class ComponentDef:
    """A spout or bolt: how many tasks, what it emits, what it consumes, what code runs.

    ``python_class`` ("module:QualName") lets an engine run the component in
    process; ``shell`` ((command, script)) lets it run the component over Storm's
    multi-lang protocol. An unchanged streamparse component has both (its shell
    command is ``streamparse_run``); a plain ShellBolt has only ``shell``.
    ``config`` is the component's own configuration (Storm's json_conf).
    """

    name: str
    kind: str
    parallelism: int
    config: Mapping[str, Any] = field(default_factory=FrozenMap)
    outputs: Mapping[str, StreamDef] = field(default_factory=FrozenMap)
    inputs: tuple[InputDef, ...] = ()
    python_class: str | None = None
    shell: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        where = f"{self.kind} {self.name!r}"
        object.__setattr__(self, "config", json_config(self.config, where, component=self.name))
        object.__setattr__(self, "outputs", FrozenMap(self.outputs))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        if self.shell is not None:
            object.__setattr__(self, "shell", tuple(self.shell))

    @property
    def is_spout(self) -> bool:
        return self.kind == SPOUT

    @property
    def is_bolt(self) -> bool:
        return self.kind == BOLT
