"""What every streamlet spout and bolt shares: the ``output`` stream, keyed output, and
user functions carried in component config.

Each streamlet operator emits its elements as one-field tuples on the stream ``output``,
as heronpy's do (the field is ``output``: heronpy's ``_output_`` cannot name a field of
the namedtuple a bolt's tuple values are). An operator whose child joins or reduces by key also
emits the element's key as a second field (``key``) and the child subscribes with
``Grouping.fields('key')``, so every element of a key reaches one task on both engines.

User functions, generators and operators are cloudpickled and base64-encoded into the
component's config (our plans keep config as JSON; heronpy pickled them into its protobuf),
so lambdas and classes of a topology's ``__main__`` reach the engines' processes.
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Sequence
from typing import Any

import cloudpickle
import msgpack

from heronpy.api.stream import Grouping, Stream

OUTPUT_STREAM = "output"
OUTPUT_FIELD = "output"
KEY_FIELD = "key"
#: component config: this operator emits ``[element, key]`` (a child keys by it)
KEYED_OUTPUT = "__streamlet_keyed_output__"


def pack_object(obj: Any) -> str:
    """``obj`` (a function, generator, operator) as a JSON-safe string."""
    return base64.b64encode(cloudpickle.dumps(obj)).decode("ascii")


class ToPack:
    """A user object a stage's config carries, packed once the stage has its name (so a
    function that cannot be pickled is reported with the stage it belongs to)."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj


def packed_config(config: dict[str, Any], stage: str) -> dict[str, Any]:
    """``config`` with its ``ToPack`` values packed."""
    out = {}
    for key, value in config.items():
        if isinstance(value, ToPack):
            try:
                value = pack_object(value.obj)
            except Exception as exc:  # cloudpickle raises TypeError, PicklingError, ...
                raise RuntimeError(f"stage {stage!r}: its {key} ({type(value.obj).__name__}) "
                                   f"cannot be pickled for the engines' processes: "
                                   f"{type(exc).__name__}: {exc}") from None
        out[key] = value
    return out


def unpack_object(text: str) -> Any:
    """The object ``pack_object`` packed."""
    return pickle.loads(base64.b64decode(text))


def routing_key(value: Any) -> Any:
    """The key a keyed operator routes ``value`` (a ``(key, value)`` pair) by: the key
    itself when msgpack can hash it, else its repr; None when ``value`` is not a pair
    (the keyed bolt then says so)."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    key = value[0]
    try:
        msgpack.packb(key, use_bin_type=True)
    except (TypeError, ValueError, OverflowError):
        return repr(key)
    return key


def keyed_outputs() -> list[Stream]:
    """The ``output`` stream of an operator that emits keys too (overrides the class's)."""
    return [Stream(fields=[OUTPUT_FIELD, KEY_FIELD], name=OUTPUT_STREAM)]


def key_grouping() -> Any:
    """How a keyed operator subscribes to its parents."""
    return Grouping.fields(KEY_FIELD)


class StreamletBoltBase:
    """Mixed into every streamlet bolt (and, as StreamletSpoutBase, spout): declares the
    ``output`` stream and emits elements on it."""

    outputs: Sequence[Any] | None = [Stream(fields=[OUTPUT_FIELD], name=OUTPUT_STREAM)]
    _keyed = False

    def _setup_output(self, config: dict[str, Any]) -> None:
        self._keyed = bool(config.get(KEYED_OUTPUT, False))

    def emit_output(self, value: Any, anchors: list[Any] | None = None) -> None:
        """Emit one element of this operator's streamlet (anchored to ``anchors``)."""
        values = [value, routing_key(value)] if self._keyed else [value]
        if anchors is None:
            # a mixin: the Bolt after it in the operator bolt's bases defines emit
            self.emit(values, stream=OUTPUT_STREAM)  # type: ignore[attr-defined]
        else:  # (the same mixin's emit)
            self.emit(values, stream=OUTPUT_STREAM, anchors=anchors)  # type: ignore[attr-defined]


def user_object(config: dict[str, Any], key: str, component: str) -> Any:
    """The packed user object under ``key`` of a streamlet component's config."""
    if key not in config:
        raise RuntimeError(f"{component} needs to be passed {key}")
    return unpack_object(config[key])
