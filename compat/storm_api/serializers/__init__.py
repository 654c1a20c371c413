"""Multi-lang serializers: how messages are framed on a component's pipes.

``SERIALIZERS`` maps the names accepted by ``Component(serializer=...)`` and
``-s`` on the command line to their classes, as pystorm's ``_SERIALIZERS``.
"""
from __future__ import annotations

from .json_serializer import JSONSerializer
from .msgpack_serializer import MsgpackSerializer
from .serializer import Serializer

SERIALIZERS: dict[str, type[Serializer]] = {"json": JSONSerializer, "msgpack": MsgpackSerializer}

__all__ = ["SERIALIZERS", "Serializer", "JSONSerializer", "MsgpackSerializer"]
