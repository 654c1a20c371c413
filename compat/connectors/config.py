"""How every connector reads its settings: Storm config keys, one way for all of them.

A connector's settings are keys of the component's Storm conf, named
``heron.connectors.<connector>.<setting>``, set the way a streamparse user sets any
component's config: ``FileSpout.spec(config={"heron.connectors.file.path": "in/*.txt"})``,
the ``config`` class attribute of a subclass (streamparse's own class-level default for
``spec``), or the topology's config for a setting every component shares (the Redis URL).
The component's conf wins over its class's ``config``, as Storm's component config wins
over the topology's.

Why keys and not constructor arguments: Storm builds components itself from the class,
with no arguments, so the conf is the only channel a topology has to each task; and keys
show up in ``heron`` config listings like every other setting.

A setting that is missing or malformed raises :class:`ConnectorConfigError` naming the
key, what it must be, and where to set it, so a topology fails at start-up with a message
that says what to fix.
"""
from __future__ import annotations

from typing import Any

__all__ = ["ConnectorConfigError", "REQUIRED", "setting", "task_slice"]


class ConnectorConfigError(ValueError):
    """A connector setting is missing or malformed (the message names the key)."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: the default of a setting that has none: leaving it out is an error
REQUIRED: Any = _Required()

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def _raw(component: Any, key: str) -> tuple[bool, Any]:
    conf = getattr(component, "storm_conf", None) or {}
    if key in conf:
        return True, conf[key]
    class_conf = getattr(type(component), "config", None) or {}
    if key in class_conf:
        return True, class_conf[key]
    return False, None


def _fail(component: Any, key: str, problem: str) -> ConnectorConfigError:
    name = type(component).__name__
    return ConnectorConfigError(
        f"{name}: config key {key!r} {problem}; set it in the component's config, e.g. "
        f"{name}.spec(config={{{key!r}: ...}}), or in the class's `config` dict")


def setting(component: Any, key: str, kind: str, default: Any = REQUIRED, *,
            minimum: int | None = None, choices: tuple[str, ...] | None = None) -> Any:
    """The value of ``key`` for ``component``, checked against ``kind``.

    ``kind`` is ``"str"``, ``"int"`` (``minimum`` bounds it), ``"bool"`` (also
    "true"/"false" strings, as YAML and command lines give them) or ``"strs"`` (a list of
    strings; one string is a list of one). ``choices`` restricts a ``"str"``. A missing
    key gives ``default``, or raises when the setting is required; ``None`` as a value
    means "not set".
    """
    present, value = _raw(component, key)
    if not present or value is None:
        if default is REQUIRED:
            raise _fail(component, key, "is required and not set")
        return default
    if kind == "str":
        if not isinstance(value, str) or not value:
            raise _fail(component, key, f"must be a non-empty string, not {value!r}")
        if choices is not None and value not in choices:
            raise _fail(component, key, f"must be one of {', '.join(choices)}, not {value!r}")
        return value
    if kind == "int":
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(component, key, f"must be an integer, not {value!r}")
        if minimum is not None and value < minimum:
            raise _fail(component, key, f"must be at least {minimum}, not {value}")
        return value
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise _fail(component, key, f"must be true or false, not {value!r}")
    if kind == "strs":
        if isinstance(value, str):
            value = [value]
        if (not isinstance(value, (list, tuple)) or not value
                or not all(isinstance(v, str) and v for v in value)):
            raise _fail(component, key, f"must be a string or a non-empty list of strings, "
                                        f"not {value!r}")
        return list(value)
    raise ValueError(f"unknown setting kind {kind!r}")


def task_slice(component: Any) -> tuple[int, int]:
    """(index, count): where this task stands among its component's tasks, from the
    context Storm gives (``task->component``), so parallel tasks can split a source
    instead of each reading all of it. (0, 1) when the context says nothing."""
    context = getattr(component, "context", None) or {}
    mapping = context.get("task->component") or {}
    name = getattr(component, "component_name", None)
    tasks = sorted(int(task) for task, comp in mapping.items() if comp == name and int(task) >= 0)
    task_id = getattr(component, "task_id", None)
    if task_id is None or not tasks or int(task_id) not in tasks:
        return 0, 1
    return tasks.index(int(task_id)), len(tasks)


def checkpoint_number(checkpoint_id: str) -> int | None:
    """The growing number checkpoint ids end in (``ckpt-<n>``), or None when there is none;
    the same order ``TwoPhaseCommitBolt`` commits pending transactions in."""
    tail = str(checkpoint_id).rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None
