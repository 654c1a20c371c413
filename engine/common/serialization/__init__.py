"""Tuple value serializers shared by every engine.

Values are serialized once, at the emitting task, and deserialized at the receiving
task, on both engines, so a value that does not survive serialization (a tuple that
becomes a list, an object msgpack rejects) behaves the same everywhere.
"""

from engine.common.serialization.serializers import (
    MsgpackSerializer,
    PickleSerializer,
    SerializationError,
    TupleSerializer,
    serializer_for_config,
)

__all__ = [
    "MsgpackSerializer",
    "PickleSerializer",
    "SerializationError",
    "TupleSerializer",
    "serializer_for_config",
]
