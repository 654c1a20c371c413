"""heronpy's serializer interface and its default (cloudpickle out, pickle in).

Tuple values on our engines go through the topology's tuple serializer
(``topology.tuple.serializer``, msgpack by default), not this one: heronpy code that
calls ``default_serializer`` directly (custom groupings, config values) keeps working.
"""

from __future__ import annotations

import pickle
from abc import abstractmethod
from typing import Any

import cloudpickle


class IHeronSerializer:
    """Serializer interface for Heron."""

    @abstractmethod
    def initialize(self, config: Any) -> None:
        """Initializes the serializer."""

    @abstractmethod
    def serialize(self, obj: Any) -> bytes:
        """Serialize an object into bytes."""

    @abstractmethod
    def deserialize(self, input_str: bytes) -> Any:
        """Turn bytes from ``serialize`` back into an object."""


class PythonSerializer(IHeronSerializer):
    """heronpy's default: cloudpickle, so lambdas and classes of ``__main__`` survive."""

    def initialize(self, config: Any = None) -> None:
        pass

    def serialize(self, obj: Any) -> bytes:
        data: bytes = cloudpickle.dumps(obj)  # cloudpickle ships no types
        return data

    def deserialize(self, input_str: bytes) -> Any:
        return pickle.loads(input_str)


default_serializer = PythonSerializer()
